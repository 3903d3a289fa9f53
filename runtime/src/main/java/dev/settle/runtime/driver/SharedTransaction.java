package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * One transaction of an exactly-once subscription and the deliveries that share it (docs/exactly-once.md, "Commit
 * batching"), as a state machine: {@link State} is where it can be, {@link Event} what can happen to it, and
 * {@link #on} the one place an event moves it. An event its state does not take is a bug in Settle and is refused with
 * an {@link IllegalStateException} naming both. Only the state is kept here: the calls it asks for ({@link Next}) are
 * made by the caller, outside its monitor ({@link CommitStage}, {@link CommitBatcher}, {@link TransactionPool}).
 * Thread-safe.
 */
final class SharedTransaction {
    /** Where a transaction can be. */
    enum State {
        /** Begun ahead (its begin may still be on its way) for deliveries to come; takes none yet. */
        SPARE,
        /** Takes deliveries, up to its maximum. */
        OPEN,
        /** Takes no more deliveries; commits once each of those it has is settled. */
        CLOSED,
        /** Each delivery is settled and one at least acknowledges: its inputs are acknowledged in it and it commits. */
        COMMITTING,
        /** Committed: each acknowledging delivery of it is settled. */
        COMMITTED,
        /**
         * Its commit was still unconfirmed at its timeout: its deliveries gave up, nothing was aborted, and the commit
         * is still sent until the coordinator answers ({@link TransactionEnds}); the input is settled once either way.
         */
        UNCONFIRMED,
        /** Each delivery left it without acknowledging or sending (or a spare never opened): aborted, not counted. */
        DISCARDED,
        /** Aborted: its deliveries fail; the coordinator is asked once none of them is still sending. */
        ABORTING,
        /** The coordinator was asked to abort it, or has aborted it at its timeout. */
        ABORTED;

        /** Whether nothing is left for its expiry to do. */
        boolean ended() {
            return this == COMMITTED || this == DISCARDED || this == ABORTED;
        }
    }

    /** What can happen to a transaction. */
    enum Event {
        /** The pool makes it the transaction deliveries join (or a dead letter's own). */
        OPEN,
        /** A delivery joins it, before its call. */
        JOIN,
        /** It takes no more deliveries: {@code maxDelay} passed, the subscription is idle, or a copy of an input came. */
        CLOSE,
        /** A delivery's outcome acknowledges: it asks for the commit and waits for it from now on. */
        EXPECT,
        /** A delivery's outputs are stored: its input goes into the commit. */
        STORED,
        /** A delivery is settled without acknowledging and without having sent anything in it. */
        LEFT,
        /** A delivery sends nothing more in it: its call is over and its sends are done, stored or failed. */
        QUIET,
        /** A delivery failed after having sent an output, or an output of it was not stored. */
        ABORT,
        /** It ran out of its timeout: the coordinator has aborted it, unless it is committing. */
        TIME_OUT,
        /** The coordinator confirmed its commit. */
        COMMITTED,
        /** Its inputs' acknowledgement or its commit was refused for good (or not answered before its timeout). */
        COMMIT_FAILED,
        /** Its timeout came while its commit was still unconfirmed. */
        COMMIT_UNCONFIRMED,
        /** A spare that will not open: the subscription stops, or it is too old to take. */
        UNUSED
    }

    /** What an event asks the caller to do, outside the monitor. */
    enum Next {
        NOTHING,
        /** It took its last delivery and is closed: it leaves the pool's open slot. */
        FULL,
        /** Acknowledge its ready inputs in it and commit it. */
        COMMIT,
        /** It has nothing to commit: abort it, quietly. */
        DISCARD,
        /** Ask the coordinator to abort it, now. */
        SEND_ABORT,
        /** The delivery that asked fails at once, with {@link #abortedBecause}: the transaction is aborted. */
        FAIL
    }

    /**
     * What an abort decided: the deliveries to fail (those waiting for the commit), whether this event aborted it (it
     * was running), and whether the coordinator is to be asked now (none of its deliveries is still sending, or it ran
     * out of its timeout).
     */
    record Aborted(List<CompletableFuture<Void>> failed, boolean abortedNow, boolean sendNow) {}

    private static final Set<State> RUNNING = EnumSet.of(State.OPEN, State.CLOSED);
    private static final Set<State> ABORTED_ANY = EnumSet.of(State.ABORTING, State.ABORTED);
    private static final Set<State> RUNNING_OR_ABORTED =
            EnumSet.of(State.OPEN, State.CLOSED, State.ABORTING, State.ABORTED);
    private static final Set<State> OPENED = EnumSet.complementOf(EnumSet.of(State.SPARE));
    private static final Set<State> ONLY_SPARE = EnumSet.of(State.SPARE);
    private static final Set<State> ONLY_OPEN = EnumSet.of(State.OPEN);
    private static final Set<State> ONLY_COMMITTING = EnumSet.of(State.COMMITTING);

    final CompletableFuture<Transaction> begun;
    /** When it was begun, on the runtime's {@code Time}. */
    final long begunNanos;
    /**
     * Completed exceptionally once it has run out of its timeout: what its deliveries still wait for (an output's
     * send, the acknowledgement, the commit) is given up then, since the coordinator aborts it anyway.
     */
    final CompletableFuture<Void> expired = new CompletableFuture<>();

    private final int maxDeliveries;

    /** Guarded by this, as is every field below. */
    private State state = State.SPARE;

    private int joined;
    private int settled;
    /** Deliveries whose call is over and whose sends are done, whatever became of them. */
    private int quiet;

    private Throwable abortedBecause;
    /** The inputs of the deliveries that joined it. */
    private final Set<MessageId> inputs = new HashSet<>();

    private final List<MessageId> ready = new ArrayList<>();
    private final List<CompletableFuture<Void>> waiting = new ArrayList<>();
    /** Its expiry at the timeout, until it has ended here. */
    private Time.Scheduled expiry;

    /** @param maxDeliveries the deliveries it takes before it closes ({@code commitBatch.maxDeliveries}) */
    SharedTransaction(CompletableFuture<Transaction> begun, long begunNanos, int maxDeliveries) {
        this.begun = begun;
        this.begunNanos = begunNanos;
        this.maxDeliveries = maxDeliveries;
    }

    /** It becomes the transaction deliveries join. */
    void open() {
        handle(Event.OPEN, null, null, null);
    }

    /** A spare never opened: answers {@link Next#DISCARD}. */
    Next unused() {
        return handle(Event.UNUSED, null, null, null);
    }

    /** Takes one more delivery, of {@code input}: {@link Next#FULL} when it takes no more now. */
    Next join(MessageId input) {
        return handle(Event.JOIN, input, null, null);
    }

    /** Whether a delivery of {@code input} joined it. */
    synchronized boolean holds(MessageId input) {
        return inputs.contains(input);
    }

    /** Takes no more deliveries: it commits once those it has are settled. */
    Next close() {
        return handle(Event.CLOSE, null, null, null);
    }

    /**
     * A delivery of it acknowledges: {@code committed} is completed by the commit, or failed if it is aborted, from
     * now on, even while the delivery's outputs are still being stored. Failed at once, with the reason, when the
     * transaction was aborted already.
     */
    void expect(CompletableFuture<Void> committed) {
        Throwable aborted = null;
        synchronized (this) {
            if (on(Event.EXPECT, null, committed, null) == Next.FAIL) {
                aborted = abortedBecause;
            }
        }
        if (aborted != null) {
            committed.completeExceptionally(aborted);
        }
    }

    /**
     * The delivery of {@code input}, expected before, is ready: its outputs are stored, so its acknowledgement goes
     * into the commit. Nothing to do once the transaction was aborted (the delivery failed with it).
     */
    Next stored(MessageId input) {
        return handle(Event.STORED, input, null, null);
    }

    /** A delivery of it is settled without acknowledging and without having sent anything in it. */
    Next left() {
        return handle(Event.LEFT, null, null, null);
    }

    /** A delivery of it sends nothing more in it: {@link Next#SEND_ABORT} when the abort waited for it. */
    Next quiet() {
        return handle(Event.QUIET, null, null, null);
    }

    /**
     * Aborts it because of {@code reason}, unless it is committing, ended or aborted already: the deliveries expected
     * to commit are failed with it (by the caller), and those still running fail with it when they are settled.
     *
     * @return null when there was nothing to abort
     */
    Aborted abort(Throwable reason) {
        return aborting(Event.ABORT, reason);
    }

    /**
     * It ran out of its timeout: aborted as {@link #abort} does, and the abort is sent now, its deliveries still
     * sending or not (the coordinator has aborted it, so none of its sends is stored any more).
     *
     * @return null when it had nothing left to abort (committing, ended, or its abort sent already)
     */
    Aborted timedOut(Throwable reason) {
        return aborting(Event.TIME_OUT, reason);
    }

    /** The coordinator confirmed the commit. */
    void committed() {
        handle(Event.COMMITTED, null, null, null);
    }

    /** The acknowledgement or the commit failed for good: aborted, the caller sends the abort. */
    void commitFailed(Throwable reason) {
        handle(Event.COMMIT_FAILED, null, null, reason);
    }

    /** Its timeout came while the commit was unconfirmed: its deliveries give up; nothing is aborted. */
    void commitUnconfirmed() {
        handle(Event.COMMIT_UNCONFIRMED, null, null, null);
    }

    /** {@code task} expires it at its timeout, unless it ends first. */
    synchronized void expiresBy(Time.Scheduled task) {
        expiry = task;
    }

    synchronized State state() {
        return state;
    }

    /** The inputs to acknowledge in the commit; read once {@link Next#COMMIT} was answered. */
    synchronized List<MessageId> readyInputs() {
        return List.copyOf(ready);
    }

    /** The deliveries the commit completes; read once {@link Next#COMMIT} was answered. */
    synchronized List<CompletableFuture<Void>> waiting() {
        return List.copyOf(waiting);
    }

    synchronized int deliveries() {
        return ready.size();
    }

    @Override
    public synchronized String toString() {
        Transaction transaction = begun.getNow(null);
        return "transaction " + (transaction == null ? "(not begun)" : transaction.getTxnID()) + " " + state;
    }

    private Aborted aborting(Event event, Throwable reason) {
        Aborted aborted;
        Time.Scheduled ended;
        synchronized (this) {
            boolean running = RUNNING.contains(state);
            Next next = on(event, null, null, reason);
            if (!running && next != Next.SEND_ABORT) {
                return null;
            }
            aborted = new Aborted(running ? List.copyOf(waiting) : List.of(), running, next == Next.SEND_ABORT);
            waiting.clear();
            ended = endedExpiry();
        }
        cancel(ended);
        return aborted;
    }

    /** {@link #on}, then the expiry cancelled outside the monitor once it has ended. */
    private Next handle(Event event, MessageId input, CompletableFuture<Void> delivery, Throwable reason) {
        Next next;
        Time.Scheduled ended;
        synchronized (this) {
            next = on(event, input, delivery, reason);
            ended = endedExpiry();
        }
        cancel(ended);
        return next;
    }

    /**
     * The one place a transaction changes state: what {@code event} does in its current state. Under the monitor.
     *
     * @param input the delivery's input, for {@link Event#JOIN} and {@link Event#STORED}
     * @param delivery what the commit completes, for {@link Event#EXPECT}
     * @param reason why, for {@link Event#ABORT}, {@link Event#TIME_OUT} and {@link Event#COMMIT_FAILED}
     * @throws IllegalStateException when its state does not take {@code event}: a bug
     */
    private Next on(Event event, MessageId input, CompletableFuture<Void> delivery, Throwable reason) {
        switch (event) {
            case OPEN -> {
                require(event, ONLY_SPARE);
                state = State.OPEN;
                return Next.NOTHING;
            }
            case UNUSED -> {
                require(event, ONLY_SPARE);
                state = State.DISCARDED;
                return Next.DISCARD;
            }
            case JOIN -> {
                require(event, ONLY_OPEN);
                joined++;
                inputs.add(input);
                if (joined < maxDeliveries) {
                    return Next.NOTHING;
                }
                state = State.CLOSED;
                return Next.FULL;
            }
            case CLOSE -> {
                // Closing twice, or once it is settling or ended, changes nothing: its timer and the idle signal race.
                require(event, OPENED);
                if (state != State.OPEN) {
                    return Next.NOTHING;
                }
                state = State.CLOSED;
                return settleIfDone();
            }
            case EXPECT -> {
                require(event, RUNNING_OR_ABORTED);
                if (ABORTED_ANY.contains(state)) {
                    return Next.FAIL;
                }
                waiting.add(delivery);
                return Next.NOTHING;
            }
            case STORED, LEFT -> {
                require(event, RUNNING_OR_ABORTED);
                if (ABORTED_ANY.contains(state)) {
                    // The delivery failed with it; nothing to settle.
                    return Next.NOTHING;
                }
                settled++;
                if (event == Event.STORED) {
                    ready.add(input);
                }
                return settleIfDone();
            }
            case QUIET -> {
                require(event, RUNNING_OR_ABORTED);
                quiet++;
                return state == State.ABORTING ? sendAbortOnceQuiet() : Next.NOTHING;
            }
            case ABORT -> {
                require(event, OPENED);
                if (!RUNNING.contains(state)) {
                    // Committing or ended: too late to abort; aborting or aborted: once is enough.
                    return Next.NOTHING;
                }
                abortedBecause = reason;
                state = State.ABORTING;
                return sendAbortOnceQuiet();
            }
            case TIME_OUT -> {
                require(event, OPENED);
                if (RUNNING.contains(state)) {
                    abortedBecause = reason;
                } else if (state != State.ABORTING) {
                    // Committing: the commit's own wait sees the expiry and decides. Ended: nothing left to do.
                    return Next.NOTHING;
                }
                state = State.ABORTED;
                return Next.SEND_ABORT;
            }
            case COMMITTED -> {
                require(event, ONLY_COMMITTING);
                state = State.COMMITTED;
                return Next.NOTHING;
            }
            case COMMIT_FAILED -> {
                require(event, ONLY_COMMITTING);
                abortedBecause = reason;
                state = State.ABORTED;
                return Next.SEND_ABORT;
            }
            case COMMIT_UNCONFIRMED -> {
                require(event, ONLY_COMMITTING);
                state = State.UNCONFIRMED;
                return Next.NOTHING;
            }
        }
        throw new IllegalStateException("unknown event " + event);
    }

    /**
     * Aborting: the abort goes out once none of its deliveries is still sending. The client takes a send that began
     * before an abort into the transaction yet may let the abort overtake it (its count of pending sends is taken after
     * the transaction's state was checked), and the broker then stores the send after the abort's marker: the output
     * topic holds that transaction open for ever, and its readers stop before it.
     */
    private Next sendAbortOnceQuiet() {
        if (quiet < joined) {
            return Next.NOTHING;
        }
        state = State.ABORTED;
        return Next.SEND_ABORT;
    }

    /** Closed and each delivery settled: committed, or discarded when none of them acknowledges. */
    private Next settleIfDone() {
        if (state != State.CLOSED || settled < joined) {
            return Next.NOTHING;
        }
        if (ready.isEmpty()) {
            state = State.DISCARDED;
            return Next.DISCARD;
        }
        state = State.COMMITTING;
        return Next.COMMIT;
    }

    private void require(Event event, Set<State> takes) {
        if (!takes.contains(state)) {
            throw new IllegalStateException(toString() + " cannot take event " + event + " (only in " + takes
                    + "): a bug in Settle's exactly-once state machine, please report it with this line");
        }
    }

    /**
     * Once it has ended here (committed, its abort sent, or discarded), its expiry would find nothing left to do and is
     * cancelled (outside the monitor), so the timer does not keep it and its deliveries reachable for the rest of its
     * timeout. Under the monitor.
     */
    private Time.Scheduled endedExpiry() {
        if (!state.ended() || expiry == null) {
            return null;
        }
        Time.Scheduled task = expiry;
        expiry = null;
        return task;
    }

    private static void cancel(Time.Scheduled task) {
        if (task != null) {
            task.cancel();
        }
    }
}
