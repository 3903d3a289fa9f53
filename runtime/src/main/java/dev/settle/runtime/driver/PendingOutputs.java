package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The outputs of one subscription that were sent and are not yet durable, with the deliveries whose
 * acknowledgement waits for them (docs/functions.md, "Outputs are pipelined"). A call's permit is given back when
 * the call returns; its delivery then waits here for its sends, on the thread that completes the last of them. At
 * {@code maxPendingOutputs} sends the receiver waits before it receives again (back-pressure, never an unbounded
 * queue); the stop waits for the deliveries here as it waits for the permits.
 *
 * <p>The bound is on sends, counted when a delivery starts waiting: one call that publishes many may pass it, and
 * then no message is received until enough of them are stored; with {@code concurrency} above 1, the calls already
 * running when the bound is reached (at most {@code concurrency - 1}) add their sends too. Thread-safe (this
 * object's monitor).
 */
final class PendingOutputs {
    /** How long the receiver waits for room before it looks at its stop again. */
    private static final long ROOM_POLL_MILLIS = 100;

    private final int max;
    private final Time time;
    /** Written under this object's monitor; read without it by {@link #awaitRoom}'s fast path. */
    private volatile int sends;
    /** Guarded by this. */
    private int deliveries;

    PendingOutputs(int max, Time time) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be at least 1, was " + max);
        }
        this.max = max;
        this.time = time;
    }

    /** A delivery starts waiting for its {@code count} sends. */
    synchronized void waiting(int count) {
        sends += count;
        deliveries++;
    }

    /** A delivery's {@code count} sends are durable, or one of them failed: it is settled now. */
    synchronized void settled(int count) {
        boolean wasFull = sends >= max;
        sends -= count;
        deliveries--;
        if ((wasFull && sends < max) || deliveries == 0) {
            notifyAll();
        }
    }

    /**
     * The receiver's: waits while {@code max} sends or more are pending, until {@code stop} says to give up;
     * whether there is room.
     */
    boolean awaitRoom(BooleanSupplier stop) throws InterruptedException {
        // Room, the common case: no monitor per message (a handler with no outputs never has any pending).
        return sends < max || awaitRoomSlowly(stop);
    }

    private synchronized boolean awaitRoomSlowly(BooleanSupplier stop) throws InterruptedException {
        while (sends >= max) {
            if (stop.getAsBoolean()) {
                return false;
            }
            wait(ROOM_POLL_MILLIS);
        }
        return true;
    }

    /** The stop's: waits up to {@code timeout} until no delivery waits for its outputs; whether none does. */
    boolean awaitNone(Duration timeout) throws InterruptedException {
        return time.await(() -> deliveries() == 0, timeout);
    }

    int sends() {
        return sends;
    }

    synchronized int deliveries() {
        return deliveries;
    }
}
