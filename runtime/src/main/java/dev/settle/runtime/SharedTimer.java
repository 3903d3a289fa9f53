package dev.settle.runtime;

import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.shade.io.netty.util.Timeout;
import org.apache.pulsar.shade.io.netty.util.Timer;
import org.apache.pulsar.shade.io.netty.util.TimerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timer of every Pulsar client the runtime makes: one daemon thread for the process, awake only when a timeout
 * is due.
 *
 * <p>A client left to itself starts a wheel timer of its own that wakes every millisecond, whether anything is
 * scheduled or not: an idle {@code settle run} spent about 2% of a core on those wake-ups alone (its
 * {@code pulsar-timer} thread: 0.82 s of CPU over 40 s with nothing to do, 2026-12-06), and a runtime with an
 * exactly-once subscription has two clients. What the clients schedule here (ack timeouts, negative
 * acknowledgements' redelivery, send timeouts, reconnection backoff, transaction timeouts) is a handful of timeouts
 * at a time, each run when it is due rather than at the wheel's next tick.
 */
final class SharedTimer implements Timer {
    static final SharedTimer INSTANCE = new SharedTimer();

    private static final Logger log = LoggerFactory.getLogger(SharedTimer.class);

    private final ScheduledThreadPoolExecutor executor;

    private SharedTimer() {
        executor = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, "settle-pulsar-timer");
            thread.setDaemon(true);
            return thread;
        });
        // A cancelled timeout (a send timeout re-armed, an ack that came in time) leaves the queue at once.
        executor.setRemoveOnCancelPolicy(true);
    }

    @Override
    public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
        Scheduled timeout = new Scheduled(task);
        timeout.future = executor.schedule(timeout, Math.max(delay, 0), unit);
        return timeout;
    }

    /** Stops nothing: the clients share it for the process's life (a client stops only a timer it made itself). */
    @Override
    public Set<Timeout> stop() {
        return Set.of();
    }

    private final class Scheduled implements Timeout, Runnable {
        private final TimerTask task;
        /** Null only while {@link #newTimeout} has not yet returned. */
        private volatile ScheduledFuture<?> future;

        private volatile boolean expired;

        Scheduled(TimerTask task) {
            this.task = task;
        }

        @Override
        public void run() {
            expired = true;
            try {
                task.run(this);
            } catch (Throwable e) {
                // As the wheel timer does: one task's failure is logged and the others still run.
                log.warn("a Pulsar client's timer task failed: {}", e.toString(), e);
            }
        }

        @Override
        public Timer timer() {
            return SharedTimer.this;
        }

        @Override
        public TimerTask task() {
            return task;
        }

        @Override
        public boolean isExpired() {
            return expired;
        }

        @Override
        public boolean isCancelled() {
            ScheduledFuture<?> scheduled = future;
            return scheduled != null && scheduled.isCancelled();
        }

        @Override
        public boolean cancel() {
            ScheduledFuture<?> scheduled = future;
            return scheduled != null && !expired && scheduled.cancel(false);
        }
    }
}
