package dev.settle.runtime.time;

import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Real time: {@code System.nanoTime()} and one daemon timer thread for every wait of the runtime. Closing it
 * abandons every wait still pending.
 */
public final class SystemTime implements Time, AutoCloseable {
    private final ScheduledThreadPoolExecutor timer;

    public SystemTime() {
        timer = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "settle-timer");
            thread.setDaemon(true);
            return thread;
        });
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public void schedule(Duration delay, Runnable task) {
        // The executor itself keeps a delay of Long.MAX_VALUE nanoseconds from overflowing its trigger time.
        timer.schedule(task, Time.saturatedNanos(delay), TimeUnit.NANOSECONDS);
    }

    /** Abandons every pending wait. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
