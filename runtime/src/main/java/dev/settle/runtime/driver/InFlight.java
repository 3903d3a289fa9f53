package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Message;

/**
 * One delivery between its call and its settlement: what settling it needs (the unit of work, the ports that ran
 * it, when it started, whom to tell), kept together instead of being passed from method to method. A
 * {@link SettlementStrategy} settles it now ({@link #settle}) or once a stage completes ({@link #settleAfter}).
 * Handed from the thread of the call to the thread that completes its stage, which the stage orders.
 *
 * <p>It is also the call's lease: a deadline ({@code handlerTimeout} from the call's start, moved by
 * {@link #extend}) and who owns the outcome. The call's thread and the lease check race for it with one
 * compare-and-set each: the thread when the call returns (and again when a pending outcome completes), the check
 * when the deadline has passed. The loser lets go: a timed-out call's late outcome is never settled.
 */
final class InFlight implements UnitOfWork.Lease {
    /** Settles a delivery; the subscription's {@link Processing}. */
    interface Settler {
        /** Settles {@code delivery} as {@code outcome} says, then gives its call back if it has not been. */
        void settle(InFlight delivery, CompletableFuture<Outcome> outcome);

        /**
         * Gives {@code delivery}'s call back now, counting it as {@code sends} pending sends, and settles it once
         * {@code until}'s stage completes, as {@code then} says from that stage's error (null when there was none).
         */
        void settleAfter(
                InFlight delivery,
                int sends,
                Supplier<CompletableFuture<?>> until,
                Function<Throwable, CompletableFuture<Outcome>> then);
    }

    /** The handler runs on {@link #caller}. */
    private static final int CALLING = 0;
    /** The call returned; its outcome completes later (a function's future, a batch's answer). */
    private static final int PENDING = 1;
    /** The outcome is known and the usual path settles it; the lease is over. */
    private static final int OVER = 2;
    /** The lease check took it: the caller is being interrupted. */
    private static final int EXPIRING = 3;
    /** The lease check took it and the caller has been interrupted (or had returned already). */
    private static final int EXPIRED = 4;

    private static final AtomicIntegerFieldUpdater<InFlight> STATE =
            AtomicIntegerFieldUpdater.newUpdater(InFlight.class, "state");

    private final Settler settler;
    private final UnitOfWork<Message<?>> work;
    private final HandlerPort port;
    private final long startedNanos;
    private final Runnable callEnded;
    private final Consumer<Optional<Settled>> done;
    /** Whether the call was given back before the settlement (it waited for its outputs or its commit). */
    private volatile boolean callGivenBack;
    /** Whether its acknowledgement was committed in its transaction already (exactly-once). */
    private volatile boolean committed;

    private volatile int state = CALLING;
    /** The thread the handler runs on: what an expired lease interrupts. */
    private final Thread caller;

    private final Time time;
    /** When the call is given up, on {@link #time}, {@link Long#MAX_VALUE} for never; moved by {@link #extend}. */
    private volatile long deadlineNanos;
    /** The latest deadline {@link #extend} may set; {@link Long#MAX_VALUE} for no bound. */
    private final long latestDeadlineNanos;
    /** Why an extension past {@link #latestDeadlineNanos} is refused; null when there is no bound. */
    private final String latestWhy;

    /**
     * When a call is given up, and how far {@link InFlight#extend} may move that.
     *
     * @param time the clock of the call's start and of its deadline, which {@link InFlight#extend} reads
     * @param nanos when the call is given up, on {@code time}; {@link Long#MAX_VALUE} for never
     * @param latestNanos how far {@link InFlight#extend} may move the deadline; {@link Long#MAX_VALUE} for no bound
     * @param latestWhy the refusal of an extension past {@code latestNanos}, naming the values; null for none
     */
    record Deadline(Time time, long nanos, long latestNanos, String latestWhy) {
        /** A call on {@code time} that is never given up. */
        static Deadline never(Time time) {
            return new Deadline(time, Long.MAX_VALUE, Long.MAX_VALUE, null);
        }
    }

    /**
     * @param settler settles it
     * @param port the line of ports that ran the call: a failure names its code, even after a swap
     * @param startedNanos when the call started, on {@code deadline}'s clock
     * @param callEnded told once, when the call is over
     * @param done told once, after the settlement: how it was settled, or empty
     */
    InFlight(
            Settler settler,
            UnitOfWork<Message<?>> work,
            HandlerPort port,
            long startedNanos,
            Runnable callEnded,
            Consumer<Optional<Settled>> done,
            Deadline deadline) {
        this.settler = settler;
        this.work = work;
        this.port = port;
        this.startedNanos = startedNanos;
        this.callEnded = callEnded;
        this.done = done;
        this.caller = Thread.currentThread();
        this.time = deadline.time();
        this.deadlineNanos = deadline.nanos();
        this.latestDeadlineNanos = deadline.latestNanos();
        this.latestWhy = deadline.latestWhy();
    }

    @Override
    public void extend(Duration duration) {
        if (duration == null) {
            throw new NullPointerException(
                    "extend(duration): duration is null; pass how long from now the call may run");
        }
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException(
                    "extend(" + duration + ") refused: pass a positive duration, how long from now the call may run");
        }
        int now = state;
        if (now != CALLING && now != PENDING) {
            throw new IllegalStateException("extend(" + duration + ") refused: the call on " + work
                    + (now == OVER ? " is over" : " was given up at its deadline (handlerTimeout)"));
        }
        long wanted = deadline(time.nanoTime(), Time.saturatedNanos(duration));
        if (latestWhy != null && (wanted == Long.MAX_VALUE || wanted - latestDeadlineNanos > 0)) {
            throw new IllegalStateException("extend(" + duration + ") refused: " + latestWhy);
        }
        // Only ever later: two threads extending at once keep the later deadline.
        synchronized (this) {
            if (deadlineNanos != Long.MAX_VALUE && (wanted == Long.MAX_VALUE || wanted - deadlineNanos > 0)) {
                deadlineNanos = wanted;
            }
        }
    }

    /**
     * {@code nanos} past {@code start}, or {@link Long#MAX_VALUE} (never) when that is too far to represent: a deadline
     * is compared by subtraction, which only holds within about 292 years.
     */
    static long deadline(long start, long nanos) {
        try {
            return Math.addExact(start, nanos);
        } catch (ArithmeticException tooFar) {
            return Long.MAX_VALUE;
        }
    }

    /** When the call is given up, on the subscription's clock; {@link Long#MAX_VALUE} for never. */
    long deadlineNanos() {
        return deadlineNanos;
    }

    /**
     * The call returned, its outcome {@code done} or pending: whether the caller owns it still. False when the lease
     * expired first: the timeout settled the delivery, and the caller's interrupt (delivered, never left pending for
     * its next call) is cleared.
     */
    boolean returned(boolean done) {
        if (STATE.compareAndSet(this, CALLING, done ? OVER : PENDING)) {
            return true;
        }
        // The check interrupts between its compare-and-set and EXPIRED: wait for it, then clear what it set.
        while (state == EXPIRING) {
            Thread.onSpinWait();
        }
        Thread.interrupted();
        return false;
    }

    /** The pending outcome completed: whether it is still to be settled (false when the lease expired first). */
    boolean completed() {
        return STATE.compareAndSet(this, PENDING, OVER);
    }

    /**
     * Takes the call from its caller when its deadline has passed at {@code nowNanos}, interrupting the caller while
     * it is in the handler: whether it did (the caller then settles it as a timeout). Called by the lease check only.
     */
    boolean expire(long nowNanos) {
        long deadline = deadlineNanos;
        if (deadline == Long.MAX_VALUE || nowNanos - deadline < 0) {
            return false;
        }
        if (STATE.compareAndSet(this, CALLING, EXPIRING)) {
            work.refuseOutputs(refusal());
            caller.interrupt();
            state = EXPIRED;
            return true;
        }
        if (STATE.compareAndSet(this, PENDING, EXPIRED)) {
            work.refuseOutputs(refusal());
            return true;
        }
        return false;
    }

    private String refusal() {
        return "the call on " + work + " ran past its deadline (handlerTimeout, or its last extend) and was settled"
                + " as a timeout: what it publishes now is refused; call delivery.extend(duration) before the deadline"
                + " for more time, or raise handlerTimeout";
    }

    /** Whether the lease check took the call ({@link #expire}). */
    boolean expired() {
        return state >= EXPIRING;
    }

    /** Settles it as {@code outcome} says, now. */
    void settle(CompletableFuture<Outcome> outcome) {
        settler.settle(this, outcome);
    }

    /** Gives the call back now and settles it once {@code until} completes, as {@code then} says (see {@link Settler}). */
    void settleAfter(
            int sends, Supplier<CompletableFuture<?>> until, Function<Throwable, CompletableFuture<Outcome>> then) {
        settler.settleAfter(this, sends, until, then);
    }

    /** Its acknowledgement was committed with its transaction: the consumer has nothing left to do for it. */
    void committed() {
        committed = true;
    }

    boolean isCommitted() {
        return committed;
    }

    /** Gives the call back, once. */
    void endCall() {
        if (!callGivenBack) {
            callGivenBack = true;
            callEnded.run();
        }
    }

    /** Whether the call was given back already. */
    boolean callGivenBack() {
        return callGivenBack;
    }

    UnitOfWork<Message<?>> work() {
        return work;
    }

    HandlerPort port() {
        return port;
    }

    long startedNanos() {
        return startedNanos;
    }

    void done(Optional<Settled> how) {
        done.accept(how);
    }
}
