package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.api.transaction.TransactionCoordinatorClientException;
import org.apache.pulsar.client.api.transaction.TxnID;
import org.junit.jupiter.api.Test;

/**
 * An end the coordinator did not confirm is sent again until its answer is final, on manual time with a fake
 * transaction that answers what the test lists. (Against real brokers restarted mid-run: ExactlyOnceClusterRestartIT.)
 */
class TransactionEndsTest {
    private final ManualTime time = new ManualTime();
    private volatile boolean stopped;
    private final TransactionEnds ends = new TransactionEnds("orders", time, () -> stopped);

    private static CompletableFuture<Void> refused(Throwable error) {
        return CompletableFuture.failedFuture(error);
    }

    private static TransactionCoordinatorClientException notConfirmed() {
        return new TransactionCoordinatorClientException("PersistenceError: the broker is stopping");
    }

    @Test
    void anAbortNotConfirmedIsSentAgainAfterHalfASecondThenDoublingUpToTenSeconds() {
        ScriptedTransaction transaction = new ScriptedTransaction();
        for (int i = 0; i < 7; i++) {
            transaction.answers.add(refused(notConfirmed()));
        }
        CompletableFuture<Void> aborted = ends.abort(transaction);
        assertThat(transaction.ends).isEqualTo(1);

        // 0.5, 1, 2, 4, 8, 10, 10 s between the attempts.
        long[] waitsMillis = {500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000};
        for (int i = 0; i < waitsMillis.length; i++) {
            time.advance(Duration.ofMillis(waitsMillis[i] - 1));
            assertThat(transaction.ends).as("before wait " + i).isEqualTo(i + 1);
            time.advance(Duration.ofMillis(1));
            assertThat(transaction.ends).as("after wait " + i).isEqualTo(i + 2);
        }
        assertThat(aborted).isCompleted();
    }

    @Test
    void aFinalAnswerIsNotSentAgain() throws Exception {
        for (Throwable answer : new Throwable[] {
            new TransactionCoordinatorClientException.TransactionNotFoundException("(1,2) not found"),
            new TransactionCoordinatorClientException.InvalidTxnStatusException("expect OPEN, but ABORTING"),
            new PulsarClientException.TransactionHasOperationFailedException(),
            new PulsarClientException.AlreadyClosedException("the client is closed")
        }) {
            ScriptedTransaction transaction = new ScriptedTransaction();
            transaction.answers.add(refused(answer));
            CompletableFuture<Void> committed = ends.commit(transaction);

            time.advance(Duration.ofMinutes(1));

            assertThat(transaction.ends).as(answer.toString()).isEqualTo(1);
            assertThat(failure(committed)).isSameAs(answer);
        }
    }

    @Test
    void aThrowingEndIsSentAgainLikeAnUnconfirmedOne() {
        ScriptedTransaction transaction = new ScriptedTransaction();
        transaction.throwFirst = new IllegalStateException("connection reset");
        CompletableFuture<Void> committed = ends.commit(transaction);

        time.advance(TransactionEnds.FIRST_RETRY);

        assertThat(transaction.ends).isEqualTo(2);
        assertThat(committed).isCompleted();
    }

    @Test
    void anEndNotConfirmedOnceTheRuntimeStopsIsNotSentAgain() throws Exception {
        ScriptedTransaction transaction = new ScriptedTransaction();
        CompletableFuture<Void> answer = new CompletableFuture<>();
        transaction.answers.add(answer);
        CompletableFuture<Void> committed = ends.commit(transaction);

        time.close();
        answer.completeExceptionally(notConfirmed());

        assertThat(failure(committed)).isInstanceOf(TransactionCoordinatorClientException.class);
        assertThat(transaction.ends).isEqualTo(1);
    }

    @Test
    void anEndThatFailsOnceTheTransactionsAreClosedIsNotSentAgain() throws Exception {
        ScriptedTransaction transaction = new ScriptedTransaction();
        CompletableFuture<Void> answer = new CompletableFuture<>();
        transaction.answers.add(answer);
        CompletableFuture<Void> aborted = ends.abort(transaction);

        stopped = true;
        answer.completeExceptionally(new TransactionCoordinatorClientException.MetaStoreHandlerNotReadyException(
                "Transaction meta store handler for tcId 0 is closing or closed."));
        time.advance(Duration.ofMinutes(1));

        assertThat(failure(aborted)).isInstanceOf(TransactionCoordinatorClientException.class);
        assertThat(transaction.ends).isEqualTo(1);
    }

    /** What {@code future} failed with; it must have failed already. */
    private static Throwable failure(CompletableFuture<Void> future) {
        return assertThat(future)
                .failsWithin(Duration.ZERO)
                .withThrowableOfType(ExecutionException.class)
                .actual()
                .getCause();
    }

    /** Answers each end with the next of {@link #answers}, then with success. */
    private static final class ScriptedTransaction implements Transaction {
        final Deque<CompletableFuture<Void>> answers = new ArrayDeque<>();
        RuntimeException throwFirst;
        int ends;

        private CompletableFuture<Void> end() {
            ends++;
            if (throwFirst != null) {
                RuntimeException thrown = throwFirst;
                throwFirst = null;
                throw thrown;
            }
            CompletableFuture<Void> answer = answers.poll();
            return answer != null ? answer : CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> commit() {
            return end();
        }

        @Override
        public CompletableFuture<Void> abort() {
            return end();
        }

        @Override
        public TxnID getTxnID() {
            return new TxnID(1, 2);
        }

        @Override
        public State getState() {
            return State.COMMITTING;
        }
    }
}
