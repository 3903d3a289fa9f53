package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * When a batch of an exactly-once subscription's deliveries is committed (docs/exactly-once.md, "Commit batching"): a
 * transaction takes the deliveries that begin while it is open, up to {@code commitBatch.maxDeliveries}, for at most
 * {@code maxDelay} after its first, until the subscription has nothing more to hand out ({@link #closeOpen}), or until
 * a copy of an input it holds begins; once closed and each of its deliveries settled, their inputs are acknowledged in
 * it in one request and it is committed. A commit the coordinator did not confirm is sent again until it does
 * ({@link TransactionEnds}). Thread-safe.
 */
final class CommitBatcher {
    private final Duration maxDelay;
    private final TransactionPool pool;
    /** The consumer's {@code acknowledgeAsync(messageIds, transaction)}. */
    private final BiFunction<List<MessageId>, Transaction, CompletableFuture<Void>> acknowledge;

    private final TransactionEnds ends;
    private final TransactionAborts aborts;
    private final DriverMetrics metrics;
    private final Time time;

    CommitBatcher(
            Duration maxDelay,
            TransactionPool pool,
            BiFunction<List<MessageId>, Transaction, CompletableFuture<Void>> acknowledge,
            TransactionEnds ends,
            TransactionAborts aborts,
            DriverMetrics metrics,
            Time time) {
        this.maxDelay = maxDelay;
        this.pool = pool;
        this.acknowledge = acknowledge;
        this.ends = ends;
        this.aborts = aborts;
        this.metrics = metrics;
        this.time = time;
    }

    /** Makes a delivery of {@code input} one of the open transaction's; the transaction it joined. */
    SharedTransaction join(MessageId input) {
        TransactionPool.Joined joined = pool.join(input);
        if (joined.closedForCopy() != null) {
            close(joined.closedForCopy());
        }
        if (joined.opened() && !joined.full()) {
            // Unless it is full or the subscription idle first; closing twice does nothing.
            SharedTransaction opened = joined.transaction();
            time.schedule(maxDelay, () -> close(opened));
        }
        return joined.transaction();
    }

    /**
     * The subscription has nothing more to hand out: the open transaction takes no more deliveries and commits once
     * those it has are settled, so they do not wait out {@code maxDelay}.
     */
    void closeOpen() {
        SharedTransaction idle = pool.open();
        if (idle != null) {
            close(idle);
        }
    }

    private void close(SharedTransaction shared) {
        pool.takeOut(shared);
        next(shared, shared.close());
    }

    /** Does what {@code shared}'s state machine asked for. */
    void next(SharedTransaction shared, SharedTransaction.Next next) {
        switch (next) {
            case COMMIT -> acknowledgeAndCommit(shared);
            case DISCARD -> aborts.discard(shared);
            case SEND_ABORT -> aborts.send(shared);
            case NOTHING, FULL, FAIL -> {}
        }
    }

    /** Acknowledges the ready inputs of {@code shared} in its transaction and commits it. */
    private void acknowledgeAndCommit(SharedTransaction shared) {
        Transaction transaction = shared.begun.join();
        List<CompletableFuture<Void>> waiting = shared.waiting();
        List<MessageId> inputs = shared.readyInputs();
        untilExpired(acknowledgeInTransaction(inputs, transaction), shared)
                .whenComplete(CommitStage.loud((acked, notAcked) -> {
                    if (notAcked != null) {
                        fail(shared, waiting, "acknowledging " + describe(shared) + " in their transaction", notAcked);
                        return;
                    }
                    KillPoint.afterAck(inputs.size());
                    long commitStarted = time.nanoTime();
                    CompletableFuture<Void> committing = ends.commit(transaction);
                    KillPoint.duringCommit(inputs.size());
                    untilExpired(committing, shared).whenComplete(CommitStage.loud((done, notCommitted) -> {
                        if (notCommitted != null && !committing.isDone()) {
                            stillCommitting(shared, waiting);
                            return;
                        }
                        if (notCommitted != null) {
                            fail(shared, waiting, "committing the transaction of " + describe(shared), notCommitted);
                            return;
                        }
                        metrics.transactionCommitted(time.nanoTime() - commitStarted);
                        shared.committed();
                        waiting.forEach(delivery -> delivery.complete(null));
                    }));
                }));
    }

    /** {@code step}, or the failure of {@code shared}'s expiry if that comes first. */
    private static CompletableFuture<?> untilExpired(CompletableFuture<?> step, SharedTransaction shared) {
        return step.isDone() ? step : CompletableFuture.anyOf(step, shared.expired);
    }

    private static String describe(SharedTransaction shared) {
        int deliveries = shared.deliveries();
        return deliveries == 1 ? "one message" : deliveries + " messages";
    }

    /** The acknowledgement in the transaction; a call that throws (a closed consumer) fails it like a refusal. */
    private CompletableFuture<Void> acknowledgeInTransaction(List<MessageId> inputs, Transaction transaction) {
        try {
            return acknowledge.apply(inputs, transaction);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * {@code shared} ran out of its timeout while its commit was still unconfirmed: its deliveries give up, with nothing
     * aborted. The commit is still being sent ({@link TransactionEnds}), and the coordinator, which no longer times out
     * a transaction it is committing, decides: committed, its inputs are acknowledged and the broker refuses their
     * copies' acknowledgements, so their outputs are read once; else nothing of it is read and the inputs come back.
     */
    private void stillCommitting(SharedTransaction shared, List<CompletableFuture<Void>> waiting) {
        metrics.transactionAborted(true);
        shared.commitUnconfirmed();
        TransactionFailedException gaveUp = new TransactionFailedException(
                "the commit of the transaction of " + describe(shared) + " was not confirmed within the transaction"
                        + " timeout (" + aborts.timeout() + "); it is sent again until the coordinator answers, and"
                        + " the input is settled once either way",
                null);
        waiting.forEach(delivery -> delivery.completeExceptionally(gaveUp));
    }

    /** {@code shared} could not be committed: aborted, every delivery waiting for it fails. */
    private void fail(SharedTransaction shared, List<CompletableFuture<Void>> waiting, String doing, Throwable error) {
        boolean timedOut = aborts.timedOut(shared.begunNanos);
        TransactionFailedException failed = aborts.failure(doing, timedOut, TransactionEnds.unwrap(error));
        shared.commitFailed(failed);
        aborts.sendCounted(shared, timedOut);
        waiting.forEach(delivery -> delivery.completeExceptionally(failed));
    }
}
