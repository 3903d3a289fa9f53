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
import java.util.concurrent.RejectedExecutionException;
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
 * (an aborted transaction does not redeliver by itself).
 *
 * <p>Deliveries share a transaction ({@link SharedTransaction}) as the subscription's {@code commitBatch} says: the
 * ones that begin while it is open, up to {@code maxDeliveries}, for at most {@code maxDelay}, or until the
 * subscription has nothing more to hand out ({@link #closeOpen}), so a lone message does not wait out the delay.
 * Its inputs are acknowledged in one request and it commits once each of its deliveries is settled. The next
 * transaction is begun while this one is open, so deliveries do not wait for the coordinator. A delivery that
 * fails without having sent anything leaves it; one that had sent an output aborts it, and every delivery of it comes
 * back. A commit or an abort the coordinator did not confirm is sent again until it does ({@link TransactionEnds}), so
 * no transaction stays half ended after a broker restart. Thread-safe.
 */
final class CommitStage {
    private static final Logger log = LoggerFactory.getLogger(CommitStage.class);
    private static final CompletableFuture<Void> NOTHING_SENT = CompletableFuture.completedFuture(null);

    /**
     * How much longer than a call may run its transaction lives: its outputs are stored, its input acknowledged and
     * the commit made in that time.
     */
    static final Duration COMMIT_MARGIN = Duration.ofSeconds(30);
    /**
     * The oldest a spare transaction is taken: its timeout runs from its begin, so a third of the margin is the most
     * it may have spent waiting, and its deliveries still have their {@code handlerTimeout} and 20 s to commit.
     */
    static final Duration SPARE_AGE = COMMIT_MARGIN.dividedBy(3);

    private final String subscription;
    private final Transactions transactions;
    private final Duration timeout;
    private final CommitBatch batching;
    /** The consumer's {@code acknowledgeAsync(messageIds, transaction)}. */
    private final BiFunction<List<MessageId>, Transaction, CompletableFuture<Void>> acknowledge;

    private final DriverMetrics metrics;
    private final Time time;
    /** Sends a commit or an abort again until the coordinator's answer is final. */
    private final TransactionEnds ends;

    /** The transaction deliveries join now; null when none is open (the next delivery begins one). */
    private SharedTransaction open;
    /**
     * The transaction the next one to open takes, begun in the background when the last one opened, so a call does
     * not wait for the coordinator's round trip; null before the first. Guarded by this.
     */
    private SharedTransaction spare;

    /**
     * @param timeout after which the coordinator aborts a transaction not committed yet: its deliveries' calls, their
     *     outputs and the commit must fit in it
     */
    CommitStage(
            String subscription,
            Transactions transactions,
            Duration timeout,
            CommitBatch batching,
            BiFunction<List<MessageId>, Transaction, CompletableFuture<Void>> acknowledge,
            DriverMetrics metrics,
            Time time) {
        this.subscription = subscription;
        this.transactions = transactions;
        this.timeout = timeout;
        this.batching = batching;
        this.acknowledge = acknowledge;
        this.metrics = metrics;
        this.time = time;
        this.ends = new TransactionEnds(subscription, time, transactions::closed);
    }

    /**
     * The transaction timeout of {@code spec}'s deliveries: the longest a transaction takes new deliveries
     * ({@code commitBatch.maxDelay}), plus its {@code handlerTimeout} (past which a call makes {@code /livez} fail),
     * plus {@link #COMMIT_MARGIN}. A transaction open longer is aborted by the coordinator, so a runtime frozen
     * mid-delivery cannot commit late over the delivery another runtime made meanwhile.
     */
    static Duration timeoutOf(SubscriptionSpec spec) {
        return spec.commitBatch().maxDelay().plus(spec.handlerTimeout()).plus(COMMIT_MARGIN);
    }

    /**
     * Makes {@code work} one of the open transaction's deliveries (beginning one when none is open), before its call:
     * waits for the coordinator on the calling thread (the call's own), at most the transaction timeout.
     *
     * @throws TransactionFailedException when none could be begun: the delivery fails without its call
     */
    void begin(UnitOfWork<Message<?>> work) throws TransactionFailedException {
        MessageId input = work.message().getMessageId();
        SharedTransaction joined;
        SharedTransaction holdingAnotherCopy = null;
        boolean closeLater;
        synchronized (this) {
            if (open != null && open.holds(input)) {
                // Another copy of this input (the broker sent it again, with a higher redelivery count, while the
                // first was still being handled) is in the open transaction. In one transaction both copies'
                // acknowledgements and both calls' outputs would commit: the outputs read twice. In two, the broker
                // refuses the second acknowledgement (the position is acknowledged, or pending in another
                // transaction), so the second transaction aborts and one copy's outputs are read.
                holdingAnotherCopy = open;
                open = null;
            }
            boolean opening = open == null || open.begun.isCompletedExceptionally();
            if (opening) {
                open = takeSpare();
            }
            joined = open;
            if (opening) {
                expireAtTimeout(joined);
            }
            boolean full = joined.join(input, batching.maxDeliveries());
            if (full) {
                open = null;
            }
            closeLater = opening && !full;
        }
        if (holdingAnotherCopy != null) {
            close(holdingAnotherCopy);
        }
        if (closeLater) {
            // Unless it is full or the subscription idle first; closing twice does nothing.
            time.schedule(batching.maxDelay(), () -> close(joined));
        }
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
     * The spare transaction, unless it failed to begin or is older than {@link #SPARE_AGE} (then aborted and begun
     * anew, on this thread's wait), and a new spare begun. Under this object's monitor.
     */
    private SharedTransaction takeSpare() {
        SharedTransaction taken = spare;
        if (taken == null
                || taken.begun.isCompletedExceptionally()
                || time.nanoTime() - taken.begunNanos > SPARE_AGE.toNanos()) {
            if (taken != null) {
                taken.begun.thenAccept(this::abortQuietly);
            }
            taken = new SharedTransaction(beginTransaction(), time.nanoTime());
        }
        spare = new SharedTransaction(beginTransaction(), time.nanoTime());
        return taken;
    }

    /**
     * Aborts the spare transaction, begun for deliveries that will not come: the subscription stops. (The coordinator
     * would abort it at its timeout.)
     */
    void close() {
        SharedTransaction left;
        synchronized (this) {
            left = spare;
            spare = null;
        }
        if (left != null) {
            left.begun.thenAccept(this::abortQuietly);
        }
    }

    /**
     * Gives {@code shared} up once it has run out of its timeout, if it is not finished by then: a send in a
     * transaction has no timeout of its own (the client refuses one), so a send lost to a broker restart, a call that
     * never returns or an acknowledgement never answered would otherwise hold every delivery of it, and the
     * subscription's outputs, for ever. Its deliveries fail and come back; the coordinator has aborted it already.
     */
    private void expireAtTimeout(SharedTransaction shared) {
        long left = shared.begunNanos + timeout.toNanos() - time.nanoTime();
        try {
            shared.expiresBy(time.schedule(Duration.ofNanos(Math.max(0, left)), () -> expire(shared)));
        } catch (RejectedExecutionException timerClosed) {
            // The runtime stops: the coordinator aborts it at its timeout, and the deliveries stop with the driver.
        }
    }

    private void expire(SharedTransaction shared) {
        TransactionFailedException timedOut = new TransactionFailedException(
                "a transaction ran out of its timeout (" + timeout
                        + ") before it could commit; aborted, the input will come back",
                null);
        synchronized (this) {
            if (open == shared) {
                open = null;
            }
        }
        // Wakes what its deliveries wait for (an output, the acknowledgement, the commit); then fails the ones ready.
        shared.expired.completeExceptionally(timedOut);
        abort(shared, timedOut);
        // The coordinator has aborted it already: no send of it can be stored any more, so nothing is waited for.
        if (shared.abortNow()) {
            sendAbort(shared);
        }
    }

    private CompletableFuture<Transaction> beginTransaction() {
        try {
            return transactions.begin(timeout);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * The subscription has nothing more to hand out: the open transaction takes no more deliveries and commits once
     * those it has are settled, so they do not wait out {@code maxDelay}.
     */
    void closeOpen() {
        SharedTransaction idle;
        synchronized (this) {
            idle = open;
        }
        if (idle != null) {
            close(idle);
        }
    }

    private void close(SharedTransaction shared) {
        synchronized (this) {
            if (open == shared) {
                open = null;
            }
        }
        act(shared, shared.close());
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
        stored.whenComplete((none, notStored) -> {
            quieted(shared);
            if (notStored != null) {
                Throwable cause = TransactionEnds.unwrap(notStored);
                // Its own failure first: the abort fails every delivery it expects, this one too.
                committed.completeExceptionally(new OutputNotDurableException(
                        "an output of message " + work.id() + " was not stored (" + cause
                                + "); its transaction is aborted and the input will come back",
                        cause));
                abort(
                        shared,
                        new TransactionFailedException(
                                "aborted with the transaction it shared with message " + work.id()
                                        + ", an output of which was not stored (" + cause + ")",
                                cause));
                return;
            }
            act(shared, shared.ready(work.message().getMessageId()));
        });
        return committed;
    }

    /**
     * {@code work}'s outcome does not acknowledge (a retry, a failure, left unacknowledged): when it sent nothing, it
     * leaves its transaction, which the others commit; else the transaction is aborted, so its outputs are never
     * read, and every other delivery of it comes back too. Whether the transaction had run out of its timeout.
     */
    boolean notAcknowledged(UnitOfWork<Message<?>> work) {
        SharedTransaction shared = work.shared();
        if (shared == null) {
            return false;
        }
        // Without its transaction (its begin failed or was not waited for) it sent nothing in it either.
        if (work.transaction().isEmpty() || work.outputs().map(Publishes::count).orElse(0) == 0) {
            boolean abortDue = shared.quiet();
            act(shared, shared.left());
            if (abortDue) {
                sendAbort(shared);
            }
            return false;
        }
        boolean timedOut = abort(
                shared,
                new TransactionFailedException(
                        "aborted with the transaction it shared with message " + work.id()
                                + ", which failed after sending an output",
                        null));
        // Its sends may still be on their way: the abort waits for them.
        work.outputs().get().durable().whenComplete((done, failed) -> quieted(shared));
        return timedOut;
    }

    /** Does what {@code shared}'s change of state asks for. */
    private void act(SharedTransaction shared, SharedTransaction.Next next) {
        switch (next) {
            case WAIT -> {}
            case COMMIT -> acknowledgeAndCommit(shared);
            case DISCARD -> {
                shared.ended();
                shared.begun.thenAccept(this::abortQuietly);
            }
        }
    }

    /** Acknowledges the ready inputs of {@code shared} in its transaction and commits it. */
    private void acknowledgeAndCommit(SharedTransaction shared) {
        Transaction transaction = shared.begun.join();
        List<CompletableFuture<Void>> waiting = shared.waiting();
        List<MessageId> inputs = shared.readyInputs();
        untilExpired(acknowledgeInTransaction(inputs, transaction), shared).whenComplete((acked, notAcked) -> {
            if (notAcked != null) {
                fail(shared, waiting, "acknowledging " + describe(shared) + " in their transaction", notAcked);
                return;
            }
            KillPoint.afterAck(inputs.size());
            long commitStarted = time.nanoTime();
            CompletableFuture<Void> committing = ends.commit(transaction);
            KillPoint.duringCommit(inputs.size());
            untilExpired(committing, shared).whenComplete((done, notCommitted) -> {
                if (notCommitted != null && !committing.isDone()) {
                    stillCommitting(shared, waiting);
                    return;
                }
                if (notCommitted != null) {
                    fail(shared, waiting, "committing the transaction of " + describe(shared), notCommitted);
                    return;
                }
                metrics.transactionCommitted(time.nanoTime() - commitStarted);
                shared.ended();
                waiting.forEach(delivery -> delivery.complete(null));
            });
        });
    }

    /** {@code step}, or the failure of {@code shared}'s expiry if that comes first. */
    private static CompletableFuture<?> untilExpired(CompletableFuture<?> step, SharedTransaction shared) {
        return step.isDone() ? step : CompletableFuture.anyOf(step, shared.expired);
    }

    private static String describe(SharedTransaction shared) {
        int deliveries = shared.deliveries();
        return deliveries == 1 ? "one message" : deliveries + " messages";
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
        SharedTransaction letter = new SharedTransaction(beginTransaction(), time.nanoTime());
        letter.join(work.message().getMessageId(), 1);
        CompletableFuture<Void> committed = new CompletableFuture<>();
        letter.expect(committed);
        expireAtTimeout(letter);
        letter.begun.whenComplete((transaction, notBegun) -> {
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
            written.whenComplete((stored, notStored) -> {
                letter.quiet();
                if (notStored != null) {
                    TransactionFailedException failed = failure(
                            "storing the dead letter of message " + work.id(),
                            false,
                            TransactionEnds.unwrap(notStored));
                    // Fails committed too: the letter's transaction expects it.
                    abort(letter, failed);
                    return;
                }
                act(letter, letter.ready(work.message().getMessageId()));
            });
        });
        return committed;
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
        TransactionFailedException gaveUp = new TransactionFailedException(
                "the commit of the transaction of " + describe(shared) + " was not confirmed within the transaction"
                        + " timeout (" + timeout + "); it is sent again until the coordinator answers, and the input"
                        + " is settled once either way",
                null);
        waiting.forEach(delivery -> delivery.completeExceptionally(gaveUp));
    }

    /** {@code shared} could not be committed: aborted, every delivery waiting for it fails. */
    private void fail(SharedTransaction shared, List<CompletableFuture<Void>> waiting, String doing, Throwable error) {
        Throwable cause = TransactionEnds.unwrap(error);
        boolean timedOut = abortTransaction(shared.begun.join(), shared.begunNanos);
        shared.ended();
        TransactionFailedException failed = failure(doing, timedOut, cause);
        waiting.forEach(delivery -> delivery.completeExceptionally(failed));
    }

    private TransactionFailedException failure(String doing, boolean timedOut, Throwable cause) {
        return new TransactionFailedException(
                doing + " failed" + (timedOut ? " after the transaction timeout (" + timeout + ")" : "") + " (" + cause
                        + "); aborted, the input will come back",
                cause);
    }

    /**
     * Aborts {@code shared} because of {@code reason}, unless it is committing or finished already: its outputs are
     * discarded and its acknowledgements undone; the deliveries waiting for it fail with {@code reason}. Whether it
     * had run out of its timeout (the coordinator has aborted it already, then).
     */
    private boolean abort(SharedTransaction shared, TransactionFailedException reason) {
        List<CompletableFuture<Void>> failed;
        synchronized (this) {
            // Decided under the monitor begin() joins under, and taken out of open in the same step: a delivery joins
            // it before the abort (and fails with it) or joins the next one, never one already aborted, which would
            // fail it at once and cost it an attempt for nothing.
            failed = shared.abort(reason);
            if (failed == null) {
                return false;
            }
            if (open == shared) {
                open = null;
            }
        }
        failed.forEach(delivery -> delivery.completeExceptionally(reason));
        boolean timedOut = timedOut(shared.begunNanos);
        if (shared.begun.getNow(null) != null) {
            metrics.transactionAborted(timedOut);
        }
        // Once none of its deliveries is still sending (SharedTransaction.abortDue says why).
        if (shared.abortDue()) {
            sendAbort(shared);
        }
        return timedOut;
    }

    /** A delivery of {@code shared} sends nothing more: the abort goes out if it waited for that one. */
    private void quieted(SharedTransaction shared) {
        if (shared.quiet()) {
            sendAbort(shared);
        }
    }

    private boolean timedOut(long begunNanos) {
        return time.nanoTime() - begunNanos >= timeout.toNanos();
    }

    /** Asks the coordinator to abort {@code shared}, once the decision is made and its sends are done. */
    private void sendAbort(SharedTransaction shared) {
        shared.ended();
        Transaction transaction = shared.begun.getNow(null);
        if (transaction != null) {
            sendAbort(transaction, timedOut(shared.begunNanos));
        }
    }

    /** Aborts {@code transaction}, counted; whether it had run out of its timeout. */
    private boolean abortTransaction(Transaction transaction, long begunNanos) {
        boolean timedOut = timedOut(begunNanos);
        metrics.transactionAborted(timedOut);
        sendAbort(transaction, timedOut);
        return timedOut;
    }

    private void sendAbort(Transaction transaction, boolean timedOut) {
        ends.abort(transaction).whenComplete((none, error) -> {
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

    /** A transaction with nothing to commit (each of its deliveries left it): aborted, not counted as an abort. */
    private void abortQuietly(Transaction transaction) {
        // A final refusal needs nothing more: the coordinator aborts an open transaction at its timeout.
        ends.abort(transaction);
    }
}
