package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.CommitBatch;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.Publishes;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit stage of an exactly-once subscription (docs/exactly-once.md): a delivery joins a transaction before its
 * call, so every output is sent in it; an acknowledging outcome (ack, drop) is settled only once its outputs are
 * stored, its input is acknowledged in the transaction and the commit has completed; any other outcome, and any
 * failure on the way, aborts it, so none of its outputs is ever read, and the settlement then brings the input back
 * (an aborted transaction does not redeliver by itself). A delivery that fails without having sent anything leaves
 * its transaction instead, and the others commit without it.
 *
 * <p>This is the door the message path goes through; the work is done behind it. A transaction's states and events
 * are {@link SharedTransaction}'s; {@link TransactionPool} keeps the open and the spare transaction, begins them and
 * gives each up at its timeout; {@link CommitBatcher} decides when a batch of deliveries commits and commits it;
 * {@link TransactionAborts} aborts; {@link TransactionEnds} sends a commit or an abort again until the coordinator
 * answers, so no transaction stays half ended after a broker restart. Thread-safe.
 */
final class CommitStage {
    private static final Logger log = LoggerFactory.getLogger(CommitStage.class);
    private static final CompletableFuture<Void> NOTHING_SENT = CompletableFuture.completedFuture(null);

    /**
     * How much longer than a call may run its transaction lives when the manifest sets no {@code transactionTimeout}:
     * its outputs are stored, its input acknowledged and the commit made in that time.
     */
    static final Duration COMMIT_MARGIN = Duration.ofSeconds(30);

    private final TransactionPool pool;
    private final CommitBatcher batcher;
    private final Duration timeout;
    private final Time time;

    /**
     * How long a subscription's transactions live and how many deliveries each takes, set once from its manifest
     * ({@link #of}).
     *
     * @param timeout after which the coordinator aborts a transaction not committed yet: its deliveries' calls, their
     *     outputs and the commit must fit in it
     * @param spareAge the oldest a transaction begun ahead is taken ({@link CommitStage#spareAgeOf})
     * @param batching how many deliveries a transaction takes, for how long
     */
    record Limits(Duration timeout, Duration spareAge, CommitBatch batching) {
        /** {@code spec}'s: {@link CommitStage#timeoutOf}, {@link CommitStage#spareAgeOf} and its {@code commitBatch}. */
        static Limits of(SubscriptionSpec spec) {
            return new Limits(timeoutOf(spec), spareAgeOf(spec), spec.commitBatch());
        }
    }

    /** @param acknowledge the consumer's {@code acknowledgeAsync(messageIds, transaction)} */
    CommitStage(
            String subscription,
            Transactions transactions,
            Limits limits,
            BiFunction<List<MessageId>, Transaction, CompletableFuture<Void>> acknowledge,
            DriverMetrics metrics,
            Time time) {
        TransactionEnds ends = new TransactionEnds(subscription, time, transactions::closed);
        TransactionAborts aborts = new TransactionAborts(subscription, limits.timeout(), ends, metrics, time);
        this.pool =
                new TransactionPool(transactions, limits.batching().maxDeliveries(), limits.spareAge(), aborts, time);
        this.batcher = new CommitBatcher(limits.batching().maxDelay(), pool, acknowledge, ends, aborts, metrics, time);
        this.timeout = limits.timeout();
        this.time = time;
    }

    /**
     * The transaction timeout of {@code spec}'s deliveries: its {@code transactionTimeout}, else the longest a
     * transaction takes new deliveries ({@code commitBatch.maxDelay}), plus its {@code handlerTimeout} (past which a
     * call is given up), plus {@link #COMMIT_MARGIN}. A transaction open longer is aborted by the coordinator, so a
     * runtime frozen mid-delivery cannot commit late over the delivery another runtime made meanwhile.
     */
    static Duration timeoutOf(SubscriptionSpec spec) {
        return spec.transactionTimeout().orElseGet(() -> callsOf(spec).plus(COMMIT_MARGIN));
    }

    /**
     * The oldest a transaction begun ahead for {@code spec} is taken: its timeout runs from its begin, so a third of
     * what the timeout leaves past the calls ({@code commitBatch.maxDelay} + {@code handlerTimeout}) is the most it may
     * have spent waiting, and its deliveries keep two thirds of that to commit in (20 s of the default 30 s).
     */
    static Duration spareAgeOf(SubscriptionSpec spec) {
        return timeoutOf(spec).minus(callsOf(spec)).dividedBy(3);
    }

    private static Duration callsOf(SubscriptionSpec spec) {
        return spec.commitBatch().maxDelay().plus(spec.handlerTimeout());
    }

    /**
     * Makes {@code work} one of the open transaction's deliveries (opening one when none is open), before its call:
     * waits for the coordinator on the calling thread (the call's own), at most the transaction timeout.
     *
     * @throws TransactionFailedException when none could be begun: the delivery fails without its call
     */
    void begin(UnitOfWork<Message<?>> work) throws TransactionFailedException {
        SharedTransaction joined = batcher.join(work.message().getMessageId());
        work.sharing(joined);
        try {
            // On the runtime's clock, which a test moves (issue 41). Begun ahead as the spare, it is seldom waited for.
            if (!time.await(joined.begun::isDone, timeout)) {
                throw new TransactionFailedException(
                        "no transaction could be begun for message " + work.id() + " within " + timeout, null);
            }
            work.inTransaction(joined.begun.join());
        } catch (CompletionException | CancellationException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new TransactionFailedException(
                    "no transaction could be begun for message " + work.id() + " (" + cause + ")", cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransactionFailedException("interrupted while beginning the transaction of " + work.id(), e);
        }
    }

    /**
     * The subscription has nothing more to hand out: the open transaction takes no more deliveries and commits once
     * those it has are settled, so they do not wait out {@code maxDelay}.
     */
    void closeOpen() {
        batcher.closeOpen();
    }

    /**
     * Aborts the spare transaction, begun for deliveries that will not come: the subscription stops. (The coordinator
     * would abort it at its timeout.)
     */
    void close() {
        pool.stop();
    }

    /**
     * Commits {@code work}, whose outcome acknowledges, with the other deliveries of its transaction: waits for its
     * outputs to be stored, then for the commit, in which its input is acknowledged. Completes once committed; else
     * exceptionally, the transaction aborted, with an {@link OutputNotDurableException} (its own output was not
     * stored) or a {@link TransactionFailedException}.
     */
    CompletableFuture<Void> commit(UnitOfWork<Message<?>> work) {
        SharedTransaction shared = work.shared();
        CompletableFuture<Void> committed = new CompletableFuture<>();
        // Failed with the transaction from now on, when it is aborted or runs out of its timeout while the outputs are
        // still being stored.
        shared.expect(committed);
        CompletableFuture<Void> stored = work.outputs().map(Publishes::durable).orElse(NOTHING_SENT);
        stored.whenComplete(loud((none, notStored) -> {
            batcher.next(shared, shared.quiet());
            if (notStored != null) {
                Throwable cause = TransactionEnds.unwrap(notStored);
                // Its own failure first: the abort fails every delivery it expects, this one too.
                committed.completeExceptionally(new OutputNotDurableException(
                        "an output of message " + work.id() + " was not stored (" + cause
                                + "); its transaction is aborted and the input will come back",
                        cause));
                pool.abort(
                        shared,
                        new TransactionFailedException(
                                "aborted with the transaction it shared with message " + work.id()
                                        + ", an output of which was not stored (" + cause + ")",
                                cause));
                return;
            }
            batcher.next(shared, shared.stored(work.message().getMessageId()));
        }));
        return committed;
    }

    /**
     * {@code work}'s outcome does not acknowledge (a retry, a failure, left unacknowledged): when it sent nothing, it
     * leaves its transaction, which the others commit; else the transaction is aborted, so its outputs are never
     * read, and every other delivery of it comes back too. Whether the transaction had run out of its timeout.
     *
     * @param why what ended the delivery; a canary's failure ({@link MovedToCurrentGeneration}) is the others' cause
     *     too, so they come back with no failure recorded: the canary's failure dead-letters none of them
     */
    boolean notAcknowledged(UnitOfWork<Message<?>> work, Throwable why) {
        SharedTransaction shared = work.shared();
        if (shared == null) {
            return false;
        }
        // Without its transaction (its begin failed or was not waited for) it sent nothing in it either.
        if (work.transaction().isEmpty() || work.outputs().map(Publishes::count).orElse(0) == 0) {
            SharedTransaction.Next quieted = shared.quiet();
            batcher.next(shared, shared.left());
            batcher.next(shared, quieted);
            return false;
        }
        boolean timedOut = pool.abort(
                shared,
                why instanceof MovedToCurrentGeneration moved
                        ? new TransactionFailedException(
                                "aborted with the transaction it shared with message " + work.id()
                                        + ", whose canary call failed after sending an output; back with no failure"
                                        + " recorded",
                                moved)
                        : new TransactionFailedException(
                                "aborted with the transaction it shared with message " + work.id()
                                        + ", which failed after sending an output",
                                null));
        // Its sends may still be on their way: the abort waits for them.
        work.outputs().get().durable().whenComplete(loud((done, failed) -> batcher.next(shared, shared.quiet())));
        return timedOut;
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
        // A transaction of one delivery, committed as a shared one is. Not waited for here: a dead letter is written
        // from a settlement, on a client or timer thread.
        MessageId input = work.message().getMessageId();
        SharedTransaction letter = pool.beginAlone(input);
        CompletableFuture<Void> committed = new CompletableFuture<>();
        letter.expect(committed);
        letter.begun.whenComplete(loud((transaction, notBegun) -> {
            if (notBegun != null) {
                Throwable cause = TransactionEnds.unwrap(notBegun);
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
            written.whenComplete(loud((stored, notStored) -> {
                batcher.next(letter, letter.quiet());
                if (notStored != null) {
                    Throwable cause = TransactionEnds.unwrap(notStored);
                    // Fails committed too: the letter's transaction expects it.
                    pool.abort(
                            letter,
                            new TransactionFailedException(
                                    "storing the dead letter of message " + work.id() + " failed (" + cause
                                            + "); aborted, the input will come back",
                                    cause));
                    return;
                }
                batcher.next(letter, letter.stored(input));
            }));
        }));
        return committed;
    }

    /**
     * {@code step}, for a future to run once complete, with what escapes it logged: a throwable would otherwise vanish
     * into the future {@code whenComplete} returns, which nobody reads, and leave the deliveries waiting on the
     * transaction unsettled for good without a line said (an event the state machine's state does not take: a bug).
     */
    static <T> BiConsumer<T, Throwable> loud(BiConsumer<T, Throwable> step) {
        return (value, error) -> {
            try {
                step.accept(value, error);
            } catch (RuntimeException | Error bug) {
                log.error(
                        "a step of an exactly-once commit failed: the deliveries of its transaction may never be"
                                + " settled (a bug in Settle, please report it with this line)",
                        bug);
                throw bug;
            }
        };
    }

    /**
     * Whether {@code error} is, or was caused by, the broker refusing an acknowledgement in a transaction as a conflict
     * ({@code TransactionConflictException}): the input is acknowledged already, or held by another transaction.
     */
    static boolean refusedAsConflict(Throwable error) {
        // A bounded walk: a cause chain may loop.
        Throwable cause = error;
        for (int depth = 0; cause != null && depth < 16; depth++, cause = cause.getCause()) {
            if (cause instanceof PulsarClientException.TransactionConflictException) {
                return true;
            }
        }
        return false;
    }
}
