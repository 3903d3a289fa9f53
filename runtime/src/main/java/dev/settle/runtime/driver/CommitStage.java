package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.Publishes;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit stage of an exactly-once subscription (docs/exactly-once.md): a delivery's transaction is begun before
 * its call, so every output is sent in it; an acknowledging outcome (ack, drop) is settled only once its outputs are
 * stored, its input is acknowledged in the transaction and the commit has completed; any other outcome, and any
 * failure on the way, aborts it, so none of its outputs is ever read, and the settlement then brings the input back
 * (an aborted transaction does not redeliver by itself). Thread-safe.
 */
final class CommitStage {
    private static final Logger log = LoggerFactory.getLogger(CommitStage.class);
    private static final CompletableFuture<Void> NOTHING_SENT = CompletableFuture.completedFuture(null);

    /**
     * How much longer than a call may run its transaction lives: its outputs are stored, its input acknowledged and
     * the commit made in that time.
     */
    static final Duration COMMIT_MARGIN = Duration.ofSeconds(30);

    private final String subscription;
    private final Transactions transactions;
    private final Duration timeout;
    /** The consumer's {@code acknowledgeAsync(messageId, transaction)}. */
    private final BiFunction<Message<?>, Transaction, CompletableFuture<Void>> acknowledge;

    private final DriverMetrics metrics;
    private final Time time;

    /**
     * @param timeout after which the coordinator aborts a transaction not committed yet: a call, its outputs and
     *     the commit must fit in it
     */
    CommitStage(
            String subscription,
            Transactions transactions,
            Duration timeout,
            BiFunction<Message<?>, Transaction, CompletableFuture<Void>> acknowledge,
            DriverMetrics metrics,
            Time time) {
        this.subscription = subscription;
        this.transactions = transactions;
        this.timeout = timeout;
        this.acknowledge = acknowledge;
        this.metrics = metrics;
        this.time = time;
    }

    /**
     * The transaction timeout of {@code spec}'s deliveries: its {@code handlerTimeout} (past which a call makes
     * {@code /livez} fail) plus {@link #COMMIT_MARGIN}. A transaction open longer is aborted by the coordinator, so a
     * runtime frozen mid-delivery cannot commit late over the delivery another runtime made meanwhile.
     */
    static Duration timeoutOf(SubscriptionSpec spec) {
        return spec.handlerTimeout().plus(COMMIT_MARGIN);
    }

    /**
     * Begins the transaction of {@code work}, before its call: waits for the coordinator on the calling thread (the
     * call's own), at most the transaction timeout.
     *
     * @throws TransactionFailedException when none could be begun: the delivery fails without its call
     */
    void begin(UnitOfWork<Message<?>> work) throws TransactionFailedException {
        try {
            work.inTransaction(transactions.begin(timeout).get(timeout.toMillis(), TimeUnit.MILLISECONDS));
        } catch (ExecutionException | CompletionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new TransactionFailedException(
                    "no transaction could be begun for message " + work.id() + " (" + cause + ")", cause);
        } catch (TimeoutException e) {
            throw new TransactionFailedException(
                    "no transaction could be begun for message " + work.id() + " within " + timeout, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransactionFailedException("interrupted while beginning the transaction of " + work.id(), e);
        }
    }

    /**
     * Commits {@code work}, whose outcome acknowledges: waits for its outputs to be stored, acknowledges its input in
     * the transaction, commits. Completes once committed; else exceptionally, the transaction aborted, with an
     * {@link OutputNotDurableException} or a {@link TransactionFailedException}.
     *
     * @param begunNanos when the transaction was begun, on {@link Time}: a failure past the timeout counts as timed
     *     out
     */
    CompletableFuture<Void> commit(UnitOfWork<Message<?>> work, long begunNanos) {
        Transaction transaction = work.transaction().orElseThrow();
        CompletableFuture<Void> committed = new CompletableFuture<>();
        CompletableFuture<Void> stored = work.outputs().map(Publishes::durable).orElse(NOTHING_SENT);
        stored.whenComplete((none, notStored) -> {
            if (notStored != null) {
                Throwable cause = unwrap(notStored);
                abort(work, begunNanos);
                committed.completeExceptionally(new OutputNotDurableException(
                        "an output of message " + work.id() + " was not stored (" + cause
                                + "); its transaction is aborted and the input will come back",
                        cause));
                return;
            }
            acknowledgeAndCommit(work, transaction, begunNanos, committed);
        });
        return committed;
    }

    /**
     * Writes the dead letter of {@code work}, whose last attempt failed (its own transaction aborted, so none of the
     * attempt's outputs is read), in a transaction of its own with the input's acknowledgement: begun here, the letter
     * sent in it by {@code write} (which reads it from {@code work}), the input acknowledged in it, committed. So the
     * letter is stored and the input acknowledged together, or neither. Completes once committed; else exceptionally,
     * the transaction aborted (or never begun).
     */
    CompletableFuture<Void> commitLetter(
            UnitOfWork<Message<?>> work, Function<UnitOfWork<Message<?>>, CompletionStage<?>> write) {
        long begunNanos = time.nanoTime();
        CompletableFuture<Void> committed = new CompletableFuture<>();
        CompletableFuture<Transaction> begun;
        try {
            // Not waited for here: a dead letter is written from a settlement, on a client or timer thread.
            begun = transactions.begin(timeout);
        } catch (RuntimeException e) {
            begun = CompletableFuture.failedFuture(e);
        }
        begun.whenComplete((transaction, notBegun) -> {
            if (notBegun != null) {
                Throwable cause = unwrap(notBegun);
                committed.completeExceptionally(new TransactionFailedException(
                        "no transaction could be begun for the dead letter of message " + work.id() + " (" + cause
                                + ")",
                        cause));
                return;
            }
            work.inTransaction(transaction);
            CompletionStage<?> written;
            try {
                written = write.apply(work);
            } catch (RuntimeException e) {
                written = CompletableFuture.failedFuture(e);
            }
            written.whenComplete((stored, notStored) -> {
                if (notStored != null) {
                    fail(work, begunNanos, committed, "storing the dead letter of message " + work.id(), notStored);
                    return;
                }
                acknowledgeAndCommit(work, transaction, begunNanos, committed);
            });
        });
        return committed;
    }

    /** Acknowledges the input of {@code work} in {@code transaction} and commits it: {@code committed} says how. */
    private void acknowledgeAndCommit(
            UnitOfWork<Message<?>> work, Transaction transaction, long begunNanos, CompletableFuture<Void> committed) {
        acknowledgeInTransaction(work, transaction).whenComplete((acked, notAcked) -> {
            if (notAcked != null) {
                fail(
                        work,
                        begunNanos,
                        committed,
                        "acknowledging message " + work.id() + " in its transaction",
                        notAcked);
                return;
            }
            KillPoint.afterAck();
            long commitStarted = time.nanoTime();
            CompletableFuture<Void> committing = commitNow(transaction);
            KillPoint.duringCommit();
            committing.whenComplete((done, notCommitted) -> {
                if (notCommitted != null) {
                    fail(
                            work,
                            begunNanos,
                            committed,
                            "committing the transaction of message " + work.id(),
                            notCommitted);
                    return;
                }
                metrics.transactionCommitted(time.nanoTime() - commitStarted);
                committed.complete(null);
            });
        });
    }

    /** The acknowledgement in the transaction; a call that throws (a closed consumer) fails it like a refusal. */
    private CompletableFuture<Void> acknowledgeInTransaction(UnitOfWork<Message<?>> work, Transaction transaction) {
        try {
            return acknowledge.apply(work.message(), transaction);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The commit; a call that throws fails it, so the delivery is always settled one way or the other. */
    private static CompletableFuture<Void> commitNow(Transaction transaction) {
        try {
            return transaction.commit();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void fail(
            UnitOfWork<Message<?>> work,
            long begunNanos,
            CompletableFuture<Void> committed,
            String doing,
            Throwable error) {
        Throwable cause = unwrap(error);
        boolean timedOut = abort(work, begunNanos);
        committed.completeExceptionally(new TransactionFailedException(
                doing + " failed" + (timedOut ? " after the transaction timeout (" + timeout + ")" : "") + " (" + cause
                        + "); aborted, the input will come back",
                cause));
    }

    /**
     * Aborts the transaction of {@code work}, if it has one: its outputs are discarded and its acknowledgement
     * undone. Whether it had run out of its timeout (the coordinator has aborted it already, then).
     */
    boolean abort(UnitOfWork<Message<?>> work, long begunNanos) {
        if (work.transaction().isEmpty()) {
            return false;
        }
        boolean timedOut = time.nanoTime() - begunNanos >= timeout.toNanos();
        metrics.transactionAborted(timedOut);
        CompletableFuture<Void> aborting;
        try {
            aborting = work.transaction().get().abort();
        } catch (RuntimeException e) {
            aborting = CompletableFuture.failedFuture(e);
        }
        aborting.whenComplete((none, error) -> {
            if (error != null && !timedOut) {
                // Nothing of it becomes visible either way: the coordinator aborts it at its timeout.
                log.debug(
                        "subscription '{}': aborting the transaction of {} failed; the coordinator aborts it at its"
                                + " timeout",
                        subscription,
                        work.id(),
                        error);
            }
        });
        return timedOut;
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
