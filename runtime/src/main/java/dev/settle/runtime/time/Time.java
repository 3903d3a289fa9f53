package dev.settle.runtime.time;

import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;

/**
 * The runtime's clock and its one timer. Everything that waits or measures goes through it, never through
 * {@code System.nanoTime()} or an executor of its own, so that tests and the test kit can move time themselves
 * ({@link ManualTime}) and a held message costs one scheduled task, never a thread.
 */
public interface Time {
    /** A task {@link #schedule}d and not yet run. */
    @FunctionalInterface
    interface Scheduled {
        /** The task will not run, and the timer lets go of it; nothing happens if it ran or was cancelled. */
        void cancel();
    }

    /** A monotonic reading in nanoseconds, comparable only with other readings of the same {@code Time}. */
    long nanoTime();

    /**
     * Runs {@code task} once {@code delay} has passed, on the timer's one thread; {@code task} must be quick.
     * Any delay is accepted: one too long to represent waits "forever" instead of overflowing.
     *
     * @return cancels the task
     * @throws java.util.concurrent.RejectedExecutionException once the timer is closed
     */
    Scheduled schedule(Duration delay, Runnable task);

    /** The wall clock, in milliseconds since the epoch (publish times are compared with it). */
    long currentTimeMillis();

    /** The wall clock as an instant, to the millisecond. */
    default Instant instant() {
        return Instant.ofEpochMilli(currentTimeMillis());
    }

    /**
     * Waits until {@code condition} holds or {@code timeout} has passed on this time, looking at it at least every
     * millisecond; the condition is asked at least once, and must be quick and thread-safe.
     *
     * @return whether the condition held
     */
    boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException;

    /** {@code delay} in nanoseconds, {@link Long#MAX_VALUE} when it is longer than about 292 years. */
    static long saturatedNanos(Duration delay) {
        try {
            return Math.max(0, delay.toNanos());
        } catch (ArithmeticException tooLong) {
            return delay.isNegative() ? 0 : Long.MAX_VALUE;
        }
    }
}
