package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.FakeCoordinator.SPARE_AGE;
import static dev.settle.runtime.driver.FakeCoordinator.TIMEOUT;
import static dev.settle.runtime.driver.FakeCoordinator.failure;
import static dev.settle.runtime.driver.FakeCoordinator.sends;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.manifest.CommitBatch;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The commit stage, the door the message path goes through, on manual time with a fake coordinator: a delivery's
 * outputs and failures against its transaction, the wait for a transaction to be begun, and dead letters in a
 * transaction of their own. (When a batch commits: CommitBatcherTest; the open and spare transactions:
 * TransactionPoolTest; the states: SharedTransactionTest; against a real coordinator: ExactlyOnceIT.)
 */
class CommitStageTest {
    private final ManualTime time = new ManualTime();
    private final RecordingMetrics metrics = new RecordingMetrics();
    private final FakeCoordinator coordinator = new FakeCoordinator();

    @AfterEach
    void stopTimer() {
        time.close();
    }

    private CommitStage stage(int maxDeliveries, Duration maxDelay) {
        return new CommitStage(
                "orders",
                coordinator.transactions,
                new CommitStage.Limits(TIMEOUT, SPARE_AGE, new CommitBatch(maxDeliveries, maxDelay)),
                coordinator.acknowledge,
                metrics,
                time);
    }

    private UnitOfWork<Message<?>> delivery() {
        return coordinator.delivery(time);
    }

    @Test
    void withoutATransactionTimeoutTransactionsLiveTheCallsAnd30sAndSparesAreTakenWithin10s() {
        SubscriptionSpec spec =
                exactlyOnce().handlerTimeout(Duration.ofSeconds(5)).build();

        assertThat(CommitStage.timeoutOf(spec)).isEqualTo(Duration.ofMillis(35_010));
        assertThat(CommitStage.spareAgeOf(spec)).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void theManifestsTransactionTimeoutIsTheTimeoutAndSparesAreTakenWithinAThirdOfWhatItLeavesPastTheCalls() {
        SubscriptionSpec spec = exactlyOnce()
                .handlerTimeout(Duration.ofSeconds(2))
                .commitBatch(new CommitBatch(100, Duration.ofMillis(500)))
                .transactionTimeout(Duration.ofSeconds(8))
                .build();

        assertThat(CommitStage.timeoutOf(spec)).isEqualTo(Duration.ofSeconds(8));
        assertThat(CommitStage.spareAgeOf(spec))
                .isEqualTo(Duration.ofMillis(5500).dividedBy(3));
    }

    private static SubscriptionSpec.Builder exactlyOnce() {
        return SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .guarantee(Guarantee.EXACTLY_ONCE);
    }

    @Test
    void anOutputNeverStoredFailsEveryDeliveryOfItsTransactionAtItsTimeout() throws Exception {
        CommitStage stage = stage(2, Duration.ofMillis(10));
        UnitOfWork<Message<?>> lost = delivery();
        UnitOfWork<Message<?>> other = delivery();
        stage.begin(lost);
        stage.begin(other);
        sends(lost, new CompletableFuture<>());
        CompletableFuture<Void> lostCommitted = stage.commit(lost);
        CompletableFuture<Void> otherCommitted = stage.commit(other);

        time.advance(TIMEOUT.minusMillis(1));
        assertThat(lostCommitted).isNotDone();
        assertThat(otherCommitted).isNotDone();
        time.advance(Duration.ofMillis(1));

        assertThat(List.of(failure(lostCommitted), failure(otherCommitted)))
                .allSatisfy(failed -> assertThat(failed)
                        .isInstanceOf(TransactionFailedException.class)
                        .hasMessageContaining("ran out of its timeout (PT35S)"));
        assertThat(coordinator.begun.get(0).aborts).hasValue(1);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
        assertThat(coordinator.acknowledged).isEmpty();
    }

    @Test
    void anOutputNotStoredFailsItsDeliveryWithItsOwnCauseAndAbortsTheOthers() throws Exception {
        CommitStage stage = stage(2, Duration.ofMillis(10));
        UnitOfWork<Message<?>> failing = delivery();
        UnitOfWork<Message<?>> other = delivery();
        stage.begin(failing);
        stage.begin(other);
        CompletableFuture<Void> otherCommitted = stage.commit(other);
        sends(failing, CompletableFuture.failedFuture(new IllegalStateException("topic terminated")));

        CompletableFuture<Void> failingCommitted = stage.commit(failing);

        assertThat(failure(failingCommitted))
                .isInstanceOf(OutputNotDurableException.class)
                .hasMessageContaining("was not stored (java.lang.IllegalStateException: topic terminated)");
        assertThat(failure(otherCommitted))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("an output of which was not stored");
        assertThat(coordinator.begun.get(0).aborts).as("every send is done").hasValue(1);
        assertThat(metrics.transactionsAborted).hasValue(1);
    }

    /**
     * The client may let an abort overtake a send begun before it, and the broker then holds the transaction open on
     * that topic for ever: the abort is sent once no delivery of the transaction is still sending.
     */
    @Test
    void anAbortWaitsUntilNoDeliveryOfItsTransactionIsStillSending() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> failing = delivery();
        UnitOfWork<Message<?>> acknowledging = delivery();
        UnitOfWork<Message<?>> running = delivery();
        stage.begin(failing);
        stage.begin(acknowledging);
        stage.begin(running);
        CompletableFuture<MessageId> failingSend = new CompletableFuture<>();
        CompletableFuture<MessageId> acknowledgingSend = new CompletableFuture<>();
        sends(failing, failingSend);
        sends(acknowledging, acknowledgingSend);

        // Failed after sending: every delivery of the transaction fails at once...
        stage.notAcknowledged(failing, null);
        CompletableFuture<Void> acknowledgingCommitted = stage.commit(acknowledging);
        assertThat(failure(acknowledgingCommitted)).isInstanceOf(TransactionFailedException.class);
        assertThat(metrics.transactionsAborted).hasValue(1);

        // ...and the coordinator is asked once the sends are done and the call still running is over.
        failingSend.complete(new FakeCoordinator.FakeId(100));
        acknowledgingSend.completeExceptionally(new IllegalStateException("not stored"));
        assertThat(coordinator.begun.get(0).aborts)
                .as("a call still running may send")
                .hasValue(0);
        stage.notAcknowledged(running, null);
        assertThat(coordinator.begun.get(0).aborts).hasValue(1);
        assertThat(coordinator.acknowledged).isEmpty();
    }

    @Test
    void theDeliveriesOfATransactionACanarysFailureAbortedFailWithItAsTheirCause() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> moved = delivery();
        UnitOfWork<Message<?>> acknowledging = delivery();
        stage.begin(moved);
        stage.begin(acknowledging);
        sends(moved, new CompletableFuture<>());

        stage.notAcknowledged(moved, new MovedToCurrentGeneration("the canary's call failed after a send"));

        // Processing reads the cause: they come back with no failure recorded, never dead-lettered for the canary.
        assertThat(failure(stage.commit(acknowledging)))
                .isInstanceOf(TransactionFailedException.class)
                .hasCauseInstanceOf(MovedToCurrentGeneration.class);
        assertThat(metrics.transactionsAborted).hasValue(1);
    }

    @Test
    void aDeliveryThatSentNothingLeavesItsTransactionAndTheOthersCommit() throws Exception {
        CommitStage stage = stage(2, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> retried = delivery();
        UnitOfWork<Message<?>> acknowledging = delivery();
        stage.begin(retried);
        stage.begin(acknowledging);

        stage.notAcknowledged(retried, null);
        CompletableFuture<Void> committed = stage.commit(acknowledging);

        assertThat(committed).isCompleted();
        assertThat(coordinator.acknowledged)
                .containsExactly(List.of(acknowledging.message().getMessageId()));
        assertThat(metrics.transactionsAborted).hasValue(0);
    }

    @Test
    void noDeliveryJoinsAnAbortedTransaction() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> failing = delivery();
        stage.begin(failing);
        sends(failing, new CompletableFuture<>());
        stage.notAcknowledged(failing, null);

        UnitOfWork<Message<?>> next = delivery();
        stage.begin(next);

        assertThat(next.transaction()).isPresent();
        assertThat(next.transaction().get()).isNotSameAs(failing.transaction().get());
    }

    @Test
    void aCallThatNeverEndsDoesNotHoldTheOtherDeliveriesOfItsTransactionPastItsTimeout() throws Exception {
        CommitStage stage = stage(2, Duration.ofMillis(10));
        UnitOfWork<Message<?>> stuck = delivery();
        UnitOfWork<Message<?>> other = delivery();
        stage.begin(stuck);
        stage.begin(other);
        CompletableFuture<Void> otherCommitted = stage.commit(other);

        time.advance(TIMEOUT);

        assertThat(failure(otherCommitted)).isInstanceOf(TransactionFailedException.class);
        assertThat(coordinator.begun.get(0).aborts).hasValue(1);
        // The stuck call ends at last: its transaction is gone, so it fails at once.
        assertThat(failure(stage.commit(stuck))).isInstanceOf(TransactionFailedException.class);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
    }

    @Test
    void anAbortedTransactionLeavesNothingOnTheTimerOnceItsAbortIsSent() throws Exception {
        CommitStage stage = stage(1, Duration.ofMillis(10));
        UnitOfWork<Message<?>> work = delivery();
        stage.begin(work);
        sends(work, CompletableFuture.completedFuture(new FakeCoordinator.FakeId(99)));

        stage.notAcknowledged(work, null);

        assertThat(coordinator.begun.get(0).aborts).hasValue(1);
        assertThat(time.pending()).as("tasks left on the timer").isZero();
    }

    /** The wait for a transaction to be begun is on the runtime's clock: a test moves it (it waited 35 s of real time). */
    @Test
    void aTransactionNeverBegunFailsItsDeliveryAtTheTimeoutOfTheRuntimesClock() throws Exception {
        coordinator.answersBegin = false;
        CommitStage stage = stage(1, Duration.ofMillis(10));
        CompletableFuture<Throwable> failed = CompletableFuture.supplyAsync(() -> {
            try {
                stage.begin(delivery());
                return null;
            } catch (TransactionFailedException e) {
                return e;
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> time.waiting() == 1);

        time.advance(TIMEOUT);

        assertThat(failed.get(10, TimeUnit.SECONDS))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("within PT35S");
    }

    @Test
    void aDeadLetterCommitsWithItsInputsAcknowledgementInATransactionOfItsOwn() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> work = delivery();

        CompletableFuture<Void> committed = stage.commitLetter(work, letter -> CompletableFuture.completedFuture(null));

        assertThat(committed).as("not held for commitBatch.maxDelay").isCompleted();
        assertThat(coordinator.begun).hasSize(1);
        assertThat(coordinator.acknowledged).containsExactly(List.of(new FakeCoordinator.FakeId(1)));
        assertThat(metrics.transactionsCommitted).hasValue(1);
        assertThat(time.pending()).as("tasks left on the timer").isZero();
    }

    @Test
    void aDeadLetterNotStoredAbortsItsTransactionAndLeavesTheInputUnacknowledged() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> work = delivery();

        CompletableFuture<Void> committed = stage.commitLetter(
                work, letter -> CompletableFuture.failedFuture(new IllegalStateException("topic terminated")));

        assertThat(failure(committed))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("storing the dead letter of message " + work.id() + " failed");
        assertThat(coordinator.begun.get(0).aborts).hasValue(1);
        assertThat(coordinator.acknowledged).isEmpty();
        assertThat(metrics.transactionsAborted).hasValue(1);
    }

    @Test
    void aDeadLetterNeverStoredFailsItsCommitAtTheTimeout() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> work = delivery();

        CompletableFuture<Void> committed = stage.commitLetter(work, letter -> new CompletableFuture<>());
        time.advance(TIMEOUT.minusMillis(1));
        assertThat(committed).isNotDone();
        time.advance(Duration.ofMillis(1));

        assertThat(failure(committed))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("ran out of its timeout (PT35S)");
        assertThat(coordinator.begun.get(0).aborts).hasValue(1);
        assertThat(coordinator.acknowledged).as("the input is not acknowledged").isEmpty();
        assertThat(metrics.transactionsTimedOut).hasValue(1);
    }

    @Test
    void aStepThatThrowsIsLoggedAsABugInsteadOfVanishingIntoItsFuture() {
        Logger stageLog = (Logger) LoggerFactory.getLogger(CommitStage.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        stageLog.addAppender(logged);
        try {
            CompletableFuture<Void> stored = new CompletableFuture<>();
            CompletableFuture<Void> after = stored.whenComplete(CommitStage.loud((none, error) -> {
                throw new IllegalStateException("transaction (0,7) ABORTED cannot take event STORED");
            }));

            stored.complete(null);

            assertThat(after).isCompletedExceptionally();
            assertThat(logged.list).singleElement().satisfies(event -> {
                assertThat(event.getLevel()).isEqualTo(Level.ERROR);
                assertThat(event.getFormattedMessage()).contains("may never be settled");
                assertThat(event.getThrowableProxy().getMessage()).contains("cannot take event STORED");
            });
        } finally {
            stageLog.detachAppender(logged);
        }
    }
}
