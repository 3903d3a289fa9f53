package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a subscription's transactions are aborted once their state machine says so ({@link SharedTransaction}): the
 * deliveries waiting for the commit fail, the abort is counted ({@code settle_transactions_total}, aborted or timed
 * out) and sent through {@link TransactionEnds}, which sends it again until the coordinator answers; a transaction
 * with nothing in it is aborted quietly, uncounted. The failures' texts are made here too. Thread-safe.
 */
final class TransactionAborts {
    private static final Logger log = LoggerFactory.getLogger(TransactionAborts.class);

    private final String subscription;
    private final Duration timeout;
    private final TransactionEnds ends;
    private final DriverMetrics metrics;
    private final Time time;

    TransactionAborts(String subscription, Duration timeout, TransactionEnds ends, DriverMetrics metrics, Time time) {
        this.subscription = subscription;
        this.timeout = timeout;
        this.ends = ends;
        this.metrics = metrics;
        this.time = time;
    }

    Duration timeout() {
        return timeout;
    }

    /**
     * Carries out what an abort of {@code shared} decided: its waiting deliveries fail with {@code reason}, the abort
     * is counted when this decision aborted a begun transaction, and sent when it is due. Whether it had run out of its
     * timeout (the coordinator has aborted it already, then); false when nothing was aborted.
     */
    boolean carryOut(SharedTransaction shared, SharedTransaction.Aborted aborted, Throwable reason) {
        if (aborted == null) {
            return false;
        }
        aborted.failed().forEach(delivery -> delivery.completeExceptionally(reason));
        boolean timedOut = timedOut(shared.begunNanos);
        if (aborted.abortedNow() && shared.begun.getNow(null) != null) {
            metrics.transactionAborted(timedOut);
        }
        if (aborted.sendNow()) {
            send(shared);
        }
        return aborted.abortedNow() && timedOut;
    }

    /** Asks the coordinator to abort {@code shared}, once the decision is made and its sends are done. */
    void send(SharedTransaction shared) {
        Transaction transaction = shared.begun.getNow(null);
        if (transaction != null) {
            send(transaction, timedOut(shared.begunNanos));
        }
    }

    /** {@code shared}'s acknowledgement or commit failed for good: its abort, counted, is sent. */
    void sendCounted(SharedTransaction shared, boolean timedOut) {
        metrics.transactionAborted(timedOut);
        send(shared.begun.join(), timedOut);
    }

    /** A transaction with nothing to commit (each of its deliveries left it, or a spare never used): not counted. */
    void discard(SharedTransaction shared) {
        // A final refusal needs nothing more: the coordinator aborts an open transaction at its timeout.
        shared.begun.thenAccept(ends::abort);
    }

    boolean timedOut(long begunNanos) {
        return time.nanoTime() - begunNanos >= timeout.toNanos();
    }

    /** Why the deliveries of a transaction that could not commit fail: {@code doing} failed, and what comes next. */
    TransactionFailedException failure(String doing, boolean timedOut, Throwable cause) {
        return new TransactionFailedException(
                doing + " failed" + (timedOut ? " after the transaction timeout (" + timeout + ")" : "") + " (" + cause
                        + "); aborted, the input will come back",
                cause);
    }

    private void send(Transaction transaction, boolean timedOut) {
        CompletableFuture<Void> aborted = ends.abort(transaction);
        aborted.whenComplete((none, error) -> {
            if (error != null && !timedOut) {
                // A final refusal: the coordinator no longer knows it, or finds it ended or ending another way (a
                // commit that failed for good has nothing to abort). Nothing of it becomes visible by this abort.
                log.debug(
                        "subscription '{}': the abort of transaction {} was refused; it is ended already or ending",
                        subscription,
                        transaction.getTxnID(),
                        error);
            }
        });
    }
}
