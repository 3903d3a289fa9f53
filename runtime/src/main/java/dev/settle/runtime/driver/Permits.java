package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * A driver's concurrency permits: one per message taken from the consumer and not yet settled. They are also what
 * a swap and a stop wait on: every permit back means no handler call runs and no outcome is pending.
 *
 * <p>A swap closes a gate in front of the permits (the receiver takes none while it is closed), takes every permit
 * within its grace, switches the port, gives the permits back and opens the gate. Nothing is counted or locked per
 * message for it: a message costs one permit taken and given back, and reads of the gate and of the free permits.
 *
 * <p>Swaps and the stop run one at a time (this object's monitor), never on the message path.
 */
final class Permits {
    /** How long the receiver waits for a permit before it looks at its stop again. */
    private static final long TAKE_POLL_MILLIS = 100;
    /** How often a receiver held at a closed gate looks again: the gate is open again within a swap's pause. */
    private static final long GATE_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final int count;
    private final Semaphore semaphore;
    private final Time time;
    private volatile boolean gateClosed;
    /** Guarded by this object's monitor: the stop took every permit it could and keeps them. */
    private boolean drained;
    /** Guarded by this object's monitor: how many permits the stop holds (at most {@link #count}). */
    private final int[] heldByStop = {0};

    Permits(int count, Time time) {
        this.count = count;
        this.semaphore = new Semaphore(count);
        this.time = time;
    }

    /**
     * The receiver's: takes one permit, waiting while a swap holds the gate or every permit is out, until
     * {@code stop} says to give up.
     *
     * @return whether a permit was taken; false only when {@code stop} said so
     */
    boolean take(BooleanSupplier stop) throws InterruptedException {
        while (!stop.getAsBoolean()) {
            if (gateClosed) {
                parkAtClosedGate();
            } else if (semaphore.tryAcquire() || semaphore.tryAcquire(TAKE_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                // The untimed try first: a free permit (the usual case) is then one compare-and-set.
                if (!gateClosed) {
                    return true;
                }
                // The gate closed while this waited: the permit is the swap's, so no call starts on the old port
                // after the gate closed.
                semaphore.release();
            }
        }
        return false;
    }

    /**
     * The receiver's, before it receives: waits, taking nothing, until the gate is open and a permit is free, until
     * {@code stop} says to give up. The client's ack-timeout clock runs from the receive, so a message must not be
     * received only to wait here for a permit. A free permit (the usual case) costs one read.
     *
     * @return whether a permit was free; false only when {@code stop} said so
     */
    boolean awaitFree(BooleanSupplier stop) throws InterruptedException {
        while (!stop.getAsBoolean()) {
            if (gateClosed) {
                parkAtClosedGate();
            } else if (semaphore.availablePermits() > 0) {
                return true;
            } else if (semaphore.tryAcquire(TAKE_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                semaphore.release();
                return true;
            }
        }
        return false;
    }

    /** A receiver held at a swap's closed gate looks again soon: it opens within the swap's pause. */
    private static void parkAtClosedGate() throws InterruptedException {
        LockSupport.parkNanos(GATE_POLL_NANOS);
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
    }

    void release() {
        semaphore.release();
    }

    /**
     * Closes the gate, takes every permit within {@code grace} (the calls running now end), runs {@code between}
     * (the port switch), gives the permits back and opens the gate. Past the grace it switches all the same, with
     * the old calls still running: {@link SubscriptionDriver.Swap#drained()} is false then. After the stop it only runs
     * {@code between}.
     */
    synchronized SubscriptionDriver.Swap swap(Runnable between, Duration grace) {
        long started = time.nanoTime();
        if (drained) {
            between.run();
            long now = time.nanoTime();
            // The stop may have ended with calls still running on the old port: "drained" only when every permit is
            // back, else the owner waits for those calls (by when they started) before it closes the old code.
            return new SubscriptionDriver.Swap(now - started, takeWhatIsFree(heldByStop), now);
        }
        gateClosed = true;
        int[] held = {0};
        boolean all = false;
        boolean interrupted = false;
        long switched;
        try {
            all = time.await(() -> takeWhatIsFree(held), grace);
        } catch (InterruptedException e) {
            interrupted = true;
        } finally {
            try {
                between.run();
            } finally {
                // Even when the switch throws: a gate left closed would stall the subscription for good.
                switched = time.nanoTime();
                gateClosed = false;
                semaphore.release(held[0]);
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return new SubscriptionDriver.Swap(switched - started, all, switched);
    }

    /**
     * The stop's: takes every permit within {@code timeout} and keeps them (no call runs afterwards); whether all
     * came back.
     */
    synchronized boolean drain(Duration timeout) throws InterruptedException {
        drained = true;
        return time.await(() -> takeWhatIsFree(heldByStop), timeout);
    }

    private boolean takeWhatIsFree(int[] held) {
        while (held[0] < count && semaphore.tryAcquire()) {
            held[0]++;
        }
        return held[0] == count;
    }

    /** Permits free now (for tests). */
    int available() {
        return semaphore.availablePermits();
    }

    @Override
    public String toString() {
        return available() + " of " + count + " permits free, gate " + (gateClosed ? "closed (a swap)" : "open");
    }
}
