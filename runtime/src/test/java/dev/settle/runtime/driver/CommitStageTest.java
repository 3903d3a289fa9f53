package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.CommitBatch;
import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.api.transaction.TransactionCoordinatorClientException;
import org.apache.pulsar.client.api.transaction.TxnID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The commit stage's own timers, on manual time with a fake coordinator: a transaction closes after
 * {@code commitBatch.maxDelay}, gives up at its timeout whatever its deliveries still wait for, and the spare one is
 * aborted at stop. (Commits against a real coordinator: ExactlyOnceIT.)
 */
class CommitStageTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(35);

    private final ManualTime time = new ManualTime();
    private final RecordingMetrics metrics = new RecordingMetrics();
    private final List<FakeTransaction> begun = new CopyOnWriteArrayList<>();
    private final List<List<MessageId>> acknowledged = new CopyOnWriteArrayList<>();
    /** What the next acknowledgements answer; a future never completed stands for one never answered. */
    private CompletableFuture<Void> acknowledgeAnswer = CompletableFuture.completedFuture(null);
    /** What the next commits answer; a future never completed stands for a coordinator that does not answer. */
    private CompletableFuture<Void> commitAnswer = CompletableFuture.completedFuture(null);
    /** What the first commits answer, one each, before {@link #commitAnswer}. */
    private final Deque<CompletableFuture<Void>> firstCommitAnswers = new ConcurrentLinkedDeque<>();

    private final AtomicInteger ids = new AtomicInteger();

    @AfterEach
    void stopTimer() {
        time.close();
    }

    private CommitStage stage(int maxDeliveries, Duration maxDelay) {
        return stage(maxDeliveries, maxDelay, true);
    }

    /** @param coordinatorAnswers whether a transaction is begun at once, or never (a coordinator that does not answer) */
    private CommitStage stage(int maxDeliveries, Duration maxDelay, boolean coordinatorAnswers) {
        return new CommitStage(
                "orders",
                timeout -> {
                    if (!coordinatorAnswers) {
                        return new CompletableFuture<>();
                    }
                    FakeTransaction transaction = new FakeTransaction(begun.size() + 1);
                    begun.add(transaction);
                    return CompletableFuture.completedFuture(transaction);
                },
                TIMEOUT,
                new CommitBatch(maxDeliveries, maxDelay),
                (inputs, transaction) -> {
                    acknowledged.add(inputs);
                    return acknowledgeAnswer;
                },
                metrics,
                time);
    }

    private UnitOfWork<Message<?>> delivery() {
        MessageId id = new FakeId(ids.incrementAndGet());
        return new UnitOfWork<>(UnitOfWorkTest.message(id), id, 1, false, time.nanoTime());
    }

    /** One delivery, begun and committed on {@code stage}: what its commit completes. */
    private CompletableFuture<Void> loneDeliveryCommitted(CommitStage stage) throws TransactionFailedException {
        UnitOfWork<Message<?>> work = delivery();
        stage.begin(work);
        return stage.commit(work);
    }

    /** Gives {@code work} one output, sent in its transaction, whose send completes with {@code send}. */
    private static void sends(UnitOfWork<Message<?>> work, CompletableFuture<MessageId> send) {
        work.outputs(new NoOutputs()).add(send);
    }

    @Test
    void aLoneDeliveryCommitsOnceMaxDelayHasPassed() throws Exception {
        CommitStage stage = stage(100, Duration.ofMillis(10));
        CompletableFuture<Void> committed = loneDeliveryCommitted(stage);

        time.advance(Duration.ofMillis(9));
        assertThat(committed).as("still open for more deliveries").isNotDone();
        time.advance(Duration.ofMillis(1));
        assertThat(committed).isCompleted();
        assertThat(acknowledged).containsExactly(List.of(new FakeId(1)));
        assertThat(metrics.transactionsCommitted).hasValue(1);
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
        assertThat(begun.get(0).aborts).hasValue(1);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
        assertThat(acknowledged).isEmpty();
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
        stage.notAcknowledged(failing);
        CompletableFuture<Void> acknowledgingCommitted = stage.commit(acknowledging);
        assertThat(failure(acknowledgingCommitted)).isInstanceOf(TransactionFailedException.class);
        assertThat(metrics.transactionsAborted).hasValue(1);

        // ...and the coordinator is asked once the sends are done and the call still running is over.
        failingSend.complete(new FakeId(100));
        acknowledgingSend.completeExceptionally(new IllegalStateException("not stored"));
        assertThat(begun.get(0).aborts).as("a call still running may send").hasValue(0);
        stage.notAcknowledged(running);
        assertThat(begun.get(0).aborts).hasValue(1);
        assertThat(acknowledged).isEmpty();
    }

    @Test
    void noDeliveryJoinsAnAbortedTransaction() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> failing = delivery();
        stage.begin(failing);
        sends(failing, new CompletableFuture<>());
        stage.notAcknowledged(failing);

        UnitOfWork<Message<?>> next = delivery();
        stage.begin(next);

        assertThat(next.transaction()).isPresent();
        assertThat(next.transaction().get()).isNotSameAs(failing.transaction().get());
    }

    /**
     * An abort decided while another thread begins a delivery: the delivery joins the transaction before the abort
     * (and fails with it, for its companion's cause) or the next one, never one already aborted (it would fail at once,
     * costing an attempt for nothing). The test holds the stage's monitor, where deliveries join, while the failing
     * delivery's thread aborts, so the two meet at the point where they used to overlap.
     */
    @Test
    void aDeliveryBegunWhileAnAbortIsDecidedNeverJoinsTheAbortedTransaction() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> failing = delivery();
        stage.begin(failing);
        sends(failing, new CompletableFuture<>());
        UnitOfWork<Message<?>> next = delivery();
        Thread aborting = new Thread(() -> stage.notAcknowledged(failing), "aborting");
        CompletableFuture<Void> probe = new CompletableFuture<>();
        boolean abortedWhenJoined;

        synchronized (stage) {
            aborting.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (aborting.getState() != Thread.State.BLOCKED) {
                assertThat(System.nanoTime())
                        .as("the aborting thread reaches the stage's monitor")
                        .isLessThan(deadline);
                Thread.onSpinWait();
            }
            stage.begin(next);
            // An acknowledging delivery of an aborted transaction fails at once.
            next.shared().expect(probe);
            abortedWhenJoined = probe.isDone();
        }
        aborting.join(Duration.ofSeconds(30).toMillis());

        assertThat(abortedWhenJoined)
                .as("the transaction it joined was aborted already")
                .isFalse();
        assertThat(probe)
                .as("failed with its companion's abort, which came after it joined")
                .isCompletedExceptionally();
        assertThat(failure(probe))
                .hasMessageContaining("which failed after sending an output")
                .hasMessageNotContaining("ran out");
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
        assertThat(begun.get(0).aborts).hasValue(1);
        // The stuck call ends at last: its transaction is gone, so it fails at once.
        assertThat(failure(stage.commit(stuck))).isInstanceOf(TransactionFailedException.class);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
    }

    /**
     * The coordinator no longer times out a transaction it is committing, so nothing is aborted: the deliveries give
     * up, and the commit goes on being sent until the coordinator answers.
     */
    @Test
    void aCommitNeverAnsweredFailsItsDeliveriesAtTheTimeoutWithoutAnAbort() throws Exception {
        commitAnswer = new CompletableFuture<>();
        CommitStage stage = stage(1, Duration.ofMillis(10));
        CompletableFuture<Void> committed = loneDeliveryCommitted(stage);
        assertThat(acknowledged).hasSize(1);

        time.advance(TIMEOUT);

        assertThat(failure(committed))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("it is sent again until the coordinator answers");
        assertThat(begun.get(0).aborts).hasValue(0);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
        assertThat(metrics.transactionsCommitted).hasValue(0);
    }

    /**
     * A broker that stops while the coordinator tells it the commit answers an error, and the coordinator does not try
     * again by itself: the transaction would stay half committed. Fails with the commit sent once.
     */
    @Test
    void aCommitNotConfirmedIsSentAgainAndItsDeliveriesCommitWhenItGoesThrough() throws Exception {
        firstCommitAnswers.add(CompletableFuture.failedFuture(new TransactionCoordinatorClientException(
                "org.apache.pulsar.broker.service.BrokerServiceException$PersistenceException")));
        firstCommitAnswers.add(CompletableFuture.failedFuture(new TransactionCoordinatorClientException(
                "Could not get response from transaction meta store within given timeout.")));
        CommitStage stage = stage(1, Duration.ofMillis(10));
        CompletableFuture<Void> committed = loneDeliveryCommitted(stage);
        assertThat(begun.get(0).commits).hasValue(1);

        time.advance(TransactionEnds.FIRST_RETRY);
        assertThat(begun.get(0).commits).hasValue(2);
        assertThat(committed).isNotDone();
        time.advance(TransactionEnds.FIRST_RETRY.multipliedBy(2));

        assertThat(begun.get(0).commits).hasValue(3);
        assertThat(committed).isCompleted();
        assertThat(begun.get(0).aborts).hasValue(0);
        assertThat(metrics.transactionsCommitted).hasValue(1);
    }

    @Test
    void aCommitTheCoordinatorRefusesForGoodIsNotSentAgainAndItsDeliveriesFail() throws Exception {
        commitAnswer = CompletableFuture.failedFuture(
                new TransactionCoordinatorClientException.InvalidTxnStatusException("expect OPEN, but ABORTING"));
        CommitStage stage = stage(1, Duration.ofMillis(10));
        CompletableFuture<Void> committed = loneDeliveryCommitted(stage);

        time.advance(TIMEOUT);

        assertThat(failure(committed))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("committing the transaction of one message failed");
        assertThat(begun.get(0).commits).hasValue(1);
    }

    @Test
    void anAcknowledgementNeverAnsweredFailsItsDeliveriesAtTheTimeout() throws Exception {
        acknowledgeAnswer = new CompletableFuture<>();
        CommitStage stage = stage(1, Duration.ofMillis(10));
        CompletableFuture<Void> committed = loneDeliveryCommitted(stage);

        time.advance(TIMEOUT);

        assertThat(failure(committed)).isInstanceOf(TransactionFailedException.class);
        assertThat(begun.get(0).aborts).hasValue(1);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
    }

    @Test
    void aTransactionCommittedInTimeIsNotAbortedAtItsTimeout() throws Exception {
        CommitStage stage = stage(1, Duration.ofMillis(10));
        CompletableFuture<Void> committed = loneDeliveryCommitted(stage);

        time.advance(TIMEOUT.multipliedBy(2));

        assertThat(committed).isCompleted();
        assertThat(begun.get(0).aborts).hasValue(0);
        assertThat(metrics.transactionsTimedOut).hasValue(0);
    }

    /** Its expiry task kept a committed transaction reachable for the rest of its timeout (issue 41). */
    @Test
    void aCommittedTransactionLeavesNothingOnTheTimer() throws Exception {
        CommitStage stage = stage(1, Duration.ofMillis(10));
        CompletableFuture<Void> committed = loneDeliveryCommitted(stage);

        assertThat(committed).isCompleted();
        assertThat(time.pending()).as("tasks left on the timer").isZero();
    }

    @Test
    void anAbortedTransactionLeavesNothingOnTheTimerOnceItsAbortIsSent() throws Exception {
        CommitStage stage = stage(1, Duration.ofMillis(10));
        UnitOfWork<Message<?>> work = delivery();
        stage.begin(work);
        sends(work, CompletableFuture.completedFuture(new FakeId(99)));

        stage.notAcknowledged(work);

        assertThat(begun.get(0).aborts).hasValue(1);
        assertThat(time.pending()).as("tasks left on the timer").isZero();
    }

    /** The wait for a transaction to be begun is on the runtime's clock: a test moves it (it waited 35 s of real time). */
    @Test
    void aTransactionNeverBegunFailsItsDeliveryAtTheTimeoutOfTheRuntimesClock() throws Exception {
        CommitStage stage = stage(1, Duration.ofMillis(10), false);
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

        assertThat(failed.get(10, java.util.concurrent.TimeUnit.SECONDS))
                .isInstanceOf(TransactionFailedException.class)
                .hasMessageContaining("within PT35S");
    }

    @Test
    void aSecondCopyOfAnInputInHandGoesIntoATransactionOfItsOwnAndTheFirstCommitsWithoutWaiting() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> first = delivery();
        MessageId input = first.message().getMessageId();
        // The broker sent the input again, with a higher redelivery count, while the first copy was being handled.
        UnitOfWork<Message<?>> again =
                new UnitOfWork<>(UnitOfWorkTest.message(input), input, 2, false, time.nanoTime());
        stage.begin(first);
        stage.begin(again);

        CompletableFuture<Void> firstCommitted = stage.commit(first);
        CompletableFuture<Void> againCommitted = stage.commit(again);

        assertThat(firstCommitted)
                .as("closed when the copy came, not after maxDelay")
                .isCompleted();
        assertThat(againCommitted).as("its own transaction waits for maxDelay").isNotDone();
        time.advance(Duration.ofSeconds(1));
        assertThat(againCommitted).isCompleted();
        // The broker refuses the second acknowledgement of the input (acknowledged already, in the first
        // transaction), so the second transaction aborts: the outputs of one copy are read, never both.
        assertThat(acknowledged).containsExactly(List.of(input), List.of(input));
        assertThat(metrics.transactionsCommitted).as("one transaction each").hasValue(2);
    }

    @Test
    void aDeadLetterCommitsWithItsInputsAcknowledgementInATransactionOfItsOwn() throws Exception {
        CommitStage stage = stage(100, Duration.ofSeconds(1));
        UnitOfWork<Message<?>> work = delivery();

        CompletableFuture<Void> committed = stage.commitLetter(work, letter -> CompletableFuture.completedFuture(null));

        assertThat(committed).as("not held for commitBatch.maxDelay").isCompleted();
        assertThat(begun).hasSize(1);
        assertThat(acknowledged).containsExactly(List.of(new FakeId(1)));
        assertThat(metrics.transactionsCommitted).hasValue(1);
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
        assertThat(begun.get(0).aborts).hasValue(1);
        assertThat(acknowledged).as("the input is not acknowledged").isEmpty();
        assertThat(metrics.transactionsTimedOut).hasValue(1);
    }

    @Test
    void theSpareTransactionIsAbortedAtStop() throws Exception {
        CommitStage stage = stage(1, Duration.ofMillis(10));
        loneDeliveryCommitted(stage).get();
        assertThat(begun).as("the delivery's and the spare").hasSize(2);

        stage.close();

        assertThat(begun.get(0).aborts).hasValue(0);
        assertThat(begun.get(1).aborts).as("the spare").hasValue(1);
        assertThat(metrics.transactionsAborted)
                .as("not counted: it had nothing")
                .hasValue(0);
    }

    private static Throwable failure(CompletableFuture<Void> future) {
        assertThat(future).isCompletedExceptionally();
        try {
            future.get();
            throw new AssertionError("not failed");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private final class FakeTransaction implements Transaction {
        private final TxnID id;
        final AtomicInteger aborts = new AtomicInteger();
        final AtomicInteger commits = new AtomicInteger();

        FakeTransaction(long n) {
            this.id = new TxnID(0, n);
        }

        @Override
        public CompletableFuture<Void> commit() {
            commits.incrementAndGet();
            CompletableFuture<Void> first = firstCommitAnswers.poll();
            return first != null ? first : commitAnswer;
        }

        @Override
        public CompletableFuture<Void> abort() {
            aborts.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public TxnID getTxnID() {
            return id;
        }

        @Override
        public State getState() {
            return State.OPEN;
        }
    }

    private record FakeId(int n) implements MessageId {
        @Override
        public byte[] toByteArray() {
            return new byte[] {(byte) n};
        }

        @Override
        public int compareTo(MessageId other) {
            return Integer.compare(n, ((FakeId) other).n);
        }
    }

    /** Outputs a test adds sends to by hand. */
    private static final class NoOutputs implements Outputs {
        @Override
        public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {}
    }
}
