package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.DurationText;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settle's own lines for a broker that cannot be reached while {@code settle run} runs: one when it goes (or, at the
 * start, is not there), with the plain cause ("connection refused at localhost:6650 — is `settle dev` running?"), one
 * when every consumer is connected again. Without it the log showed only the Pulsar client's warnings, with shaded class
 * names, once every 30 s.
 *
 * <p>It asks the consumers four times a second whether they are connected (no network), and only when one is not does
 * it try the service URL's port, for the cause, at most every {@link #PROBE_EVERY}. A consumer that reconnects at once
 * (a topic moved to another broker) is not a loss: once every consumer has been connected, a disconnection the port does
 * not explain is reported only when it lasts {@link #UNEXPLAINED}.
 */
final class BrokerWatch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerWatch.class);
    static final Duration EVERY = Duration.ofMillis(250);
    /** How often the port is tried while a consumer is disconnected and no loss has been reported yet. */
    static final Duration PROBE_EVERY = Duration.ofSeconds(5);

    static final Duration UNEXPLAINED = Duration.ofSeconds(10);

    private final String serviceUrl;
    private final Supplier<List<String>> disconnected;
    private final Function<String, Optional<String>> cause;
    private final ScheduledExecutorService timer;

    private boolean connectedOnce;
    private long disconnectedSince = -1;
    private long nextProbe;
    private boolean lost;

    private BrokerWatch(
            String serviceUrl, Supplier<List<String>> disconnected, Function<String, Optional<String>> cause) {
        this.serviceUrl = serviceUrl;
        this.disconnected = disconnected;
        this.cause = cause;
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "settle-broker-watch");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Watches the consumers {@code disconnected} names, on the broker at {@code serviceUrl}, until closed. */
    static BrokerWatch start(String serviceUrl, Supplier<List<String>> disconnected) {
        BrokerWatch watch = new BrokerWatch(serviceUrl, disconnected, ServiceUrlProbe::cause);
        watch.timer.scheduleWithFixedDelay(watch::check, 0, EVERY.toMillis(), TimeUnit.MILLISECONDS);
        return watch;
    }

    private void check() {
        try {
            List<String> waiting = disconnected.get();
            long now = System.nanoTime();
            if (waiting.isEmpty()) {
                if (lost) {
                    log.info(
                            "the broker at {} {}: every subscription is connected, {} after it {}",
                            serviceUrl,
                            connectedOnce ? "is back" : "answers now",
                            DurationText.elapsed(Duration.ofNanos(now - disconnectedSince)),
                            connectedOnce ? "was lost" : "was first tried");
                }
                lost = false;
                connectedOnce = true;
                disconnectedSince = -1;
                return;
            }
            if (lost) {
                return;
            }
            if (disconnectedSince < 0) {
                disconnectedSince = now;
                nextProbe = now;
            }
            if (now - nextProbe < 0) {
                return;
            }
            nextProbe = now + PROBE_EVERY.toNanos();
            Optional<String> unreachable = cause.apply(serviceUrl);
            if (unreachable.isPresent()) {
                lost = true;
                log.warn(
                        "the broker at {} {}: {}; subscriptions {} wait for it and resume on their own (not ready"
                                + " until then)",
                        serviceUrl,
                        connectedOnce ? "is lost" : "cannot be reached",
                        unreachable.get(),
                        waiting);
            } else if (connectedOnce && now - disconnectedSince >= UNEXPLAINED.toNanos()) {
                lost = true;
                log.warn(
                        "subscriptions {} have not been connected to the broker for {}, though {} accepts connections;"
                                + " the Pulsar client's warnings say why",
                        waiting,
                        DurationText.elapsed(Duration.ofNanos(now - disconnectedSince)),
                        serviceUrl);
            }
        } catch (RuntimeException e) {
            // A consumer being replaced: the next check sees the new one.
            log.debug("broker watch: {}", e.toString());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
