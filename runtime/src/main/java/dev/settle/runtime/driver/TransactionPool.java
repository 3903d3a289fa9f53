package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * Which transactions of an exactly-once subscription are open: the one deliveries join now, and the spare begun ahead
 * in the background while it is open, so a call seldom waits for the coordinator's round trip. It begins them, gives
 * each up at its timeout, and decides aborts under the same monitor deliveries join under. Thread-safe.
 */
final class TransactionPool {
    /** The transaction a delivery joined, and what its joining changed. */
    record Joined(SharedTransaction transaction, boolean opened, boolean full, SharedTransaction closedForCopy) {}

    private final Transactions transactions;
    private final int maxDeliveries;
    /** The oldest a spare transaction is taken ({@link CommitStage#spareAgeOf}). */
    private final Duration spareAge;

    private final TransactionAborts aborts;
    private final Time time;

    /** The transaction deliveries join now; null when none is open (the next delivery opens one). Guarded by this. */
    private SharedTransaction open;
    /**
     * The transaction the next one to open takes, begun in the background when the last one opened, so a call does
     * not wait for the coordinator's round trip; null before the first. Guarded by this.
     */
    private SharedTransaction spare;

    /**
     * @param maxDeliveries the deliveries a transaction takes before it closes ({@code commitBatch.maxDeliveries})
     * @param spareAge the oldest a spare transaction is taken: its timeout runs from its begin
     */
    TransactionPool(
            Transactions transactions, int maxDeliveries, Duration spareAge, TransactionAborts aborts, Time time) {
        this.transactions = transactions;
        this.maxDeliveries = maxDeliveries;
        this.spareAge = spareAge;
        this.aborts = aborts;
        this.time = time;
    }

    /**
     * Makes a delivery of {@code input} one of the open transaction's, opening one when none is open (or the open
     * one's begin failed). A copy of an input the open transaction holds closes it and joins the next one: in one
     * transaction both copies' acknowledgements and both calls' outputs would commit, and the outputs be read twice;
     * in two, the broker refuses the second acknowledgement (the position is acknowledged, or pending in another
     * transaction), so the second transaction aborts and one copy's outputs are read. The caller closes
     * {@link Joined#closedForCopy}.
     */
    synchronized Joined join(MessageId input) {
        SharedTransaction closedForCopy = null;
        if (open != null && open.holds(input)) {
            closedForCopy = open;
            open = null;
        }
        boolean opening = open == null || open.begun.isCompletedExceptionally();
        if (opening) {
            open = takeSpare();
            open.open();
            expireAtTimeout(open);
        }
        SharedTransaction joined = open;
        boolean full = joined.join(input) == SharedTransaction.Next.FULL;
        if (full) {
            open = null;
        }
        return new Joined(joined, opening, full, closedForCopy);
    }

    /** The transaction deliveries join now; null when none is open. */
    synchronized SharedTransaction open() {
        return open;
    }

    /** {@code shared} takes no more deliveries from the pool (it closes). */
    synchronized void takeOut(SharedTransaction shared) {
        if (open == shared) {
            open = null;
        }
    }

    /**
     * A transaction of its own for one delivery of {@code input} (a dead letter with its input's acknowledgement),
     * begun now and not waited for; given up at its timeout like the others.
     */
    SharedTransaction beginAlone(MessageId input) {
        SharedTransaction alone = new SharedTransaction(begin(), time.nanoTime(), 1);
        alone.open();
        alone.join(input);
        expireAtTimeout(alone);
        return alone;
    }

    /**
     * Aborts {@code shared} because of {@code reason}, unless it is committing or ended already: its outputs are
     * discarded and its acknowledgements undone; the deliveries waiting for it fail with {@code reason}. Whether it had
     * run out of its timeout (the coordinator has aborted it already, then).
     */
    boolean abort(SharedTransaction shared, TransactionFailedException reason) {
        SharedTransaction.Aborted aborted;
        synchronized (this) {
            // Decided under the monitor deliveries join under, and taken out of open in the same step: a delivery joins
            // it before the abort (and fails with it) or joins the next one, never one already aborted, which would
            // fail it at once and cost it an attempt for nothing.
            aborted = shared.abort(reason);
            if (aborted != null && open == shared) {
                open = null;
            }
        }
        return aborts.carryOut(shared, aborted, reason);
    }

    /**
     * Aborts the spare transaction, begun for deliveries that will not come: the subscription stops. (The coordinator
     * would abort it at its timeout.)
     */
    void stop() {
        SharedTransaction left;
        synchronized (this) {
            left = spare;
            spare = null;
        }
        if (left != null) {
            left.unused();
            aborts.discard(left);
        }
    }

    /**
     * The spare transaction, unless it failed to begin or is older than {@code spareAge} (then aborted and begun
     * anew, on this thread's wait), and a new spare begun. Under this object's monitor.
     */
    private SharedTransaction takeSpare() {
        SharedTransaction taken = spare;
        if (taken == null
                || taken.begun.isCompletedExceptionally()
                || time.nanoTime() - taken.begunNanos > spareAge.toNanos()) {
            if (taken != null) {
                taken.unused();
                aborts.discard(taken);
            }
            taken = new SharedTransaction(begin(), time.nanoTime(), maxDeliveries);
        }
        spare = new SharedTransaction(begin(), time.nanoTime(), maxDeliveries);
        return taken;
    }

    private CompletableFuture<Transaction> begin() {
        try {
            return transactions.begin(aborts.timeout());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Gives {@code shared} up once it has run out of its timeout, if it is not finished by then: a send in a
     * transaction has no timeout of its own (the client refuses one), so a send lost to a broker restart, a call that
     * never returns or an acknowledgement never answered would otherwise hold every delivery of it, and the
     * subscription's outputs, for ever. Its deliveries fail and come back; the coordinator has aborted it already.
     */
    private void expireAtTimeout(SharedTransaction shared) {
        long left = shared.begunNanos + aborts.timeout().toNanos() - time.nanoTime();
        try {
            shared.expiresBy(time.schedule(Duration.ofNanos(Math.max(0, left)), () -> expire(shared)));
        } catch (RejectedExecutionException timerClosed) {
            // The runtime stops: the coordinator aborts it at its timeout, and the deliveries stop with the driver.
        }
    }

    private void expire(SharedTransaction shared) {
        TransactionFailedException timedOut = new TransactionFailedException(
                "a transaction ran out of its timeout (" + aborts.timeout()
                        + ") before it could commit; aborted, the input will come back",
                null);
        takeOut(shared);
        // Wakes what its deliveries wait for (an output, the acknowledgement, the commit); then fails the ones ready.
        shared.expired.completeExceptionally(timedOut);
        // The coordinator has aborted it already: no send of it can be stored any more, so nothing is waited for.
        aborts.carryOut(shared, shared.timedOut(timedOut), timedOut);
    }
}
