package dev.settle.runtime.time;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Real time: {@code System.nanoTime()} and one daemon timer thread for every wait of the runtime. Closing it
 * abandons every wait still pending.
 */
public final class SystemTime implements Time, AutoCloseable {
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final ScheduledThreadPoolExecutor timer;

    public SystemTime() {
        timer = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "settle-timer");
            thread.setDaemon(true);
            return thread;
        });
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        // A cancelled task leaves the queue at once: what it refers to is not kept reachable until its delay is over.
        timer.setRemoveOnCancelPolicy(true);
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public Scheduled schedule(Duration delay, Runnable task) {
        // The executor itself keeps a delay of Long.MAX_VALUE nanoseconds from overflowing its trigger time.
        ScheduledFuture<?> scheduled = timer.schedule(task, Time.saturatedNanos(delay), TimeUnit.NANOSECONDS);
        return () -> scheduled.cancel(false);
    }

    @Override
    public long currentTimeMillis() {
        return System.currentTimeMillis();
    }

    @Override
    public boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + Time.saturatedNanos(timeout);
        while (!condition.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            // Polled, not signalled: what is waited for (permits given back, calls ending) signals nobody, and a
            // millisecond is well inside what a swap or a stop may take.
            LockSupport.parkNanos(Math.min(left, POLL_NANOS));
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
        }
        return true;
    }

    /** Abandons every pending wait. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
