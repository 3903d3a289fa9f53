package dev.settle.runtime.driver;

import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The runtime's one timer for {@code retryAfter}: every held message of every subscription waits here, as one
 * scheduled task, never as a thread. At its time the task negatively acknowledges the message (through the
 * owning driver, which may have stopped meanwhile and then does nothing: the message stays unacknowledged and
 * the broker gives it back once the consumer is gone). No per-message bookkeeping beyond the task itself, so a
 * held message costs the task and its closure.
 */
public final class HeldRetries implements AutoCloseable {
    private final ScheduledThreadPoolExecutor timer;

    public HeldRetries() {
        ThreadFactory factory = runnable -> {
            Thread thread = new Thread(runnable, "settle-held-retries");
            thread.setDaemon(true);
            return thread;
        };
        timer = new ScheduledThreadPoolExecutor(1, factory);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Runs {@code release} after {@code delay}, on the timer's thread; {@code release} must be quick. */
    public void hold(Duration delay, Runnable release) {
        timer.schedule(release, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Abandons every wait: the messages stay unacknowledged. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
