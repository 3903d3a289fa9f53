package dev.settle.runtime;

import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.preflight.BacklogStats;
import dev.settle.runtime.time.Time;
import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds {@code settle_backlog_drain_seconds} and {@code settle_oldest_unsettled_age_seconds} (docs/scaling.md): every
 * {@link #EVERY} it reads each running subscription's backlog from the broker's stats and pairs it with how many
 * deliveries this runtime has settled, on a daemon thread of its own. Only with {@code pulsar.adminUrl}.
 */
final class DrainPoller implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DrainPoller.class);
    /** Half KEDA's default polling interval (30 s): a scaler never reads a value older than one interval. */
    static final Duration EVERY = Duration.ofSeconds(15);

    private final BacklogStats stats;
    private final SettleMetrics metrics;
    private final Supplier<List<SubscriptionSpec>> running;
    private final Time time;
    private final Set<String> failing = new HashSet<>();
    private volatile boolean closed;

    private DrainPoller(
            BacklogStats stats, SettleMetrics metrics, Supplier<List<SubscriptionSpec>> running, Time time) {
        this.stats = stats;
        this.metrics = metrics;
        this.running = running;
        this.time = time;
    }

    /** Started, or null without {@code pulsar.adminUrl}. */
    static DrainPoller start(
            BacklogStats stats, SettleMetrics metrics, Supplier<List<SubscriptionSpec>> running, Time time) {
        DrainPoller poller = new DrainPoller(stats, metrics, running, time);
        Thread thread = new Thread(poller::loop, "settle-drain-poller");
        thread.setDaemon(true);
        thread.start();
        return poller;
    }

    private void loop() {
        while (!closed) {
            for (SubscriptionSpec spec : running.get()) {
                if (!spec.topics().names().isEmpty()) {
                    poll(spec);
                }
            }
            try {
                time.await(() -> closed, EVERY);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void poll(SubscriptionSpec spec) {
        String name = spec.name();
        try {
            BacklogStats.Backlog backlog = stats.read(name, spec.topics().names());
            metrics.watchDrain(name)
                    .record(
                            time.nanoTime(),
                            metrics.settledForGood(name),
                            backlog.backlog(),
                            backlog.oldestPublishMillis(),
                            time.instant().toEpochMilli());
            if (failing.remove(name)) {
                log.info("subscription '{}': its backlog can be read from the broker again", name);
            }
        } catch (IOException | RuntimeException e) {
            // One line when it starts failing, not one every 15 s; the gauges keep their last reading.
            if (failing.add(name)) {
                log.warn(
                        "subscription '{}': its backlog cannot be read from the broker for the drain-time metrics"
                                + " ({}); asked again every {} s",
                        name,
                        e.getMessage(),
                        EVERY.toSeconds());
            }
        }
    }

    @Override
    public void close() {
        closed = true;
    }
}
