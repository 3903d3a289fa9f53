package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.FakeCoordinator.SPARE_AGE;
import static dev.settle.runtime.driver.FakeCoordinator.TIMEOUT;
import static dev.settle.runtime.driver.FakeCoordinator.failure;
import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.transaction.TransactionCoordinatorClientException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * When a batch of deliveries commits, on manual time with a fake coordinator: after {@code commitBatch.maxDelay}, when
 * full, when the subscription is idle, or when a copy of an input comes; and what becomes of a commit or an
 * acknowledgement the coordinator does not confirm.
 */
class CommitBatcherTest {
    private final ManualTime time = new ManualTime();
    private final RecordingMetrics metrics = new RecordingMetrics();
    private final FakeCoordinator coordinator = new FakeCoordinator();

    @AfterEach
    void stopTimer() {
        time.close();
    }

    private CommitBatcher batcher(int maxDeliveries, Duration maxDelay) {
        TransactionEnds ends = new TransactionEnds("orders", time, () -> false);
        TransactionAborts aborts = new TransactionAborts("orders", TIMEOUT, ends, metrics, time);
        TransactionPool pool = new TransactionPool(coordinator.transactions, maxDeliveries, SPARE_AGE, aborts, time);
        return new CommitBatcher(maxDelay, pool, coordinator.acknowledge, ends, aborts, metrics, time);
    }

    /** A delivery of {@code input} that joins, sends nothing and acknowledges: what its commit completes. */
    private static CompletableFuture<Void> acknowledging(CommitBatcher batcher, MessageId input) {
        SharedTransaction shared = batcher.join(input);
        CompletableFuture<Void> committed = new CompletableFuture<>();
        shared.expect(committed);
        batcher.next(shared, shared.quiet());
        batcher.next(shared, shared.stored(input));
        return committed;
    }

    private static MessageId input(int n) {
        return new FakeCoordinator.FakeId(n);
    }

    @Test
    void aLoneDeliveryCommitsOnceMaxDelayHasPassed() {
        CompletableFuture<Void> committed = acknowledging(batcher(100, Duration.ofMillis(10)), input(1));

        time.advance(Duration.ofMillis(9));
        assertThat(committed).as("still open for more deliveries").isNotDone();
        time.advance(Duration.ofMillis(1));
        assertThat(committed).isCompleted();
        assertThat(coordinator.acknowledged).containsExactly(List.of(input(1)));
        assertThat(metrics.transactionsCommitted).hasValue(1);
    }

    @Test
    void aFullTransactionCommitsItsDeliveriesTogetherWithoutWaitingForMaxDelay() {
        CommitBatcher batcher = batcher(2, Duration.ofSeconds(1));

        CompletableFuture<Void> first = acknowledging(batcher, input(1));
        assertThat(first).as("one more to take").isNotDone();
        CompletableFuture<Void> second = acknowledging(batcher, input(2));

        assertThat(first).isCompleted();
        assertThat(second).isCompleted();
        assertThat(coordinator.acknowledged).as("in one request").containsExactly(List.of(input(1), input(2)));
        assertThat(metrics.transactionsCommitted).hasValue(1);
    }

    @Test
    void anIdleSubscriptionsOpenTransactionCommitsWithoutWaitingForMaxDelay() {
        CommitBatcher batcher = batcher(100, Duration.ofSeconds(1));
        CompletableFuture<Void> committed = acknowledging(batcher, input(1));

        batcher.closeOpen();

        assertThat(committed).isCompleted();
        assertThat(coordinator.begun.get(0).commits).hasValue(1);
    }

    @Test
    void aSecondCopyOfAnInputInHandGoesIntoATransactionOfItsOwnAndTheFirstCommitsWithoutWaiting() {
        CommitBatcher batcher = batcher(100, Duration.ofSeconds(1));
        // The broker sent the input again, with a higher redelivery count, while the first copy was being handled.
        CompletableFuture<Void> firstCommitted = acknowledging(batcher, input(1));
        CompletableFuture<Void> againCommitted = acknowledging(batcher, input(1));

        assertThat(firstCommitted)
                .as("closed when the copy came, not after maxDelay")
                .isCompleted();
        assertThat(againCommitted).as("its own transaction waits for maxDelay").isNotDone();
        time.advance(Duration.ofSeconds(1));
        assertThat(againCommitted).isCompleted();
        // The broker refuses the second acknowledgement of the input (acknowledged already, in the first
        // transaction), so the second transaction aborts: the outputs of one copy are read, never both.
        assertThat(coordinator.acknowledged).containsExactly(List.of(input(1)), List.of(input(1)));
        assertThat(metrics.transactionsCommitted).as("one transaction each").hasValue(2);
    }

    /**
     * The coordinator no longer times out a transaction it is committing, so nothing is aborted: the deliveries give
     * up, and the commit goes on being sent until the coordinator answers.
     */
    @Test
    void aCommitNeverAnsweredFailsItsDeliveriesAtTheTimeoutWithoutAnAbort() {
        coordinator.commitAnswer = new CompletableFuture<>();
        CompletableFuture<Void> committed = acknowledging(batcher(1, Duration.ofMillis(10)), input(1));
        assertThat(coordinator.acknowledged).hasSize(1);

        time.advance(TIMEOUT);

        assertThat(failure(committed))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("it is sent again until the coordinator answers");
        assertThat(coordinator.begun.get(0).aborts).hasValue(0);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
        assertThat(metrics.transactionsCommitted).hasValue(0);
    }

    /**
     * A broker that stops while the coordinator tells it the commit answers an error, and the coordinator does not try
     * again by itself: the transaction would stay half committed. Fails with the commit sent once.
     */
    @Test
    void aCommitNotConfirmedIsSentAgainAndItsDeliveriesCommitWhenItGoesThrough() {
        coordinator.firstCommitAnswers.add(CompletableFuture.failedFuture(new TransactionCoordinatorClientException(
                "org.apache.pulsar.broker.service.BrokerServiceException$PersistenceException")));
        coordinator.firstCommitAnswers.add(CompletableFuture.failedFuture(new TransactionCoordinatorClientException(
                "Could not get response from transaction meta store within given timeout.")));
        CompletableFuture<Void> committed = acknowledging(batcher(1, Duration.ofMillis(10)), input(1));
        assertThat(coordinator.begun.get(0).commits).hasValue(1);

        time.advance(TransactionEnds.FIRST_RETRY);
        assertThat(coordinator.begun.get(0).commits).hasValue(2);
        assertThat(committed).isNotDone();
        time.advance(TransactionEnds.FIRST_RETRY.multipliedBy(2));

        assertThat(coordinator.begun.get(0).commits).hasValue(3);
        assertThat(committed).isCompleted();
        assertThat(coordinator.begun.get(0).aborts).hasValue(0);
        assertThat(metrics.transactionsCommitted).hasValue(1);
    }

    @Test
    void aCommitTheCoordinatorRefusesForGoodIsNotSentAgainAndItsDeliveriesFail() {
        coordinator.commitAnswer = CompletableFuture.failedFuture(
                new TransactionCoordinatorClientException.InvalidTxnStatusException("expect OPEN, but ABORTING"));
        CompletableFuture<Void> committed = acknowledging(batcher(1, Duration.ofMillis(10)), input(1));

        time.advance(TIMEOUT);

        assertThat(failure(committed))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("committing the transaction of one message failed");
        assertThat(coordinator.begun.get(0).commits).hasValue(1);
    }

    @Test
    void anAcknowledgementNeverAnsweredFailsItsDeliveriesAtTheTimeout() {
        coordinator.acknowledgeAnswer = new CompletableFuture<>();
        CompletableFuture<Void> committed = acknowledging(batcher(1, Duration.ofMillis(10)), input(1));

        time.advance(TIMEOUT);

        assertThat(failure(committed))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("after the transaction timeout (PT35S)");
        assertThat(coordinator.begun.get(0).aborts).hasValue(1);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
    }

    @Test
    void aTransactionCommittedInTimeIsNotAbortedAtItsTimeout() {
        CompletableFuture<Void> committed = acknowledging(batcher(1, Duration.ofMillis(10)), input(1));

        time.advance(TIMEOUT.multipliedBy(2));

        assertThat(committed).isCompleted();
        assertThat(coordinator.begun.get(0).aborts).hasValue(0);
        assertThat(metrics.transactionsTimedOut).hasValue(0);
    }

    /** Its expiry task kept a committed transaction reachable for the rest of its timeout (issue 41). */
    @Test
    void aCommittedTransactionLeavesNothingOnTheTimer() {
        CompletableFuture<Void> committed = acknowledging(batcher(1, Duration.ofMillis(10)), input(1));

        assertThat(committed).isCompleted();
        assertThat(time.pending()).as("tasks left on the timer").isZero();
    }
}
