package dev.settle.runtime;

import dev.settle.runtime.driver.HeldRetries;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.observe.SubscriptionProbe;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running Settle: a validated manifest's handlers loaded and opened, one Pulsar client, and one driver per
 * subscription. Data flows one way: manifest, then handlers, then drivers, then consumer calls.
 */
public final class Settle implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Settle.class);

    private final Manifest manifest;
    private final SettleMetrics metrics;
    private final HealthEndpoint health;
    private final HandlerLoader loader;
    private final List<LoadedHandler> handlers;
    private final PulsarClient client;
    private final HeldRetries timer;
    private final List<SubscriptionDriver> drivers;
    private final Duration grace;
    private volatile boolean closed;

    private Settle(Manifest manifest, SettleMetrics metrics, HealthEndpoint health, HandlerLoader loader,
            List<LoadedHandler> handlers, PulsarClient client, HeldRetries timer, List<SubscriptionDriver> drivers,
            Duration grace) {
        this.manifest = manifest;
        this.metrics = metrics;
        this.health = health;
        this.loader = loader;
        this.handlers = handlers;
        this.client = client;
        this.timer = timer;
        this.drivers = drivers;
        this.grace = grace;
    }

    /**
     * Serves /metrics, /livez and /readyz, loads and opens every handler, then subscribes every driver; /readyz
     * turns ready once all are subscribed and connected. On any failure everything started so far is closed again
     * and nothing keeps running.
     *
     * @param grace how long in-flight handler calls may run on after a stop is asked for
     * @throws HandlerLoadException when a handler cannot be loaded or opened
     * @throws PulsarClientException when the client or a consumer cannot be created
     * @throws IOException when the HTTP endpoint cannot be bound
     */
    public static Settle start(Manifest manifest, Duration grace)
            throws HandlerLoadException, PulsarClientException, IOException {
        return start(manifest, new HandlerLoader(), Map.of(), grace);
    }

    /**
     * As {@link #start(Manifest, Duration)}, with handlers a check has already loaded (not opened) with
     * {@code loader}, by subscription name: they are used as they are, not loaded and constructed again. Settle
     * closes {@code loader} when it stops, or when it fails to start.
     */
    public static Settle start(Manifest manifest, HandlerLoader loader, Map<String, LoadedHandler> loaded,
            Duration grace) throws HandlerLoadException, PulsarClientException, IOException {
        SettleMetrics metrics = new SettleMetrics();
        // First, so /livez answers while consumers are still subscribing.
        HealthEndpoint health;
        try {
            health = HealthEndpoint.start(manifest.http(), metrics);
        } catch (IOException e) {
            loader.close();
            throw e;
        }
        List<LoadedHandler> handlers = new ArrayList<>();
        PulsarClient client = null;
        HeldRetries timer = null;
        List<SubscriptionDriver> drivers = new ArrayList<>();
        try {
            for (SubscriptionSpec spec : manifest.subscriptions()) {
                LoadedHandler handler = loaded.containsKey(spec.name())
                        ? loaded.get(spec.name())
                        : loader.load(spec.jar(), spec.handler());
                handlers.add(handler);
                handler.open(SubscriptionContext.of(spec));
                log.info("subscription '{}': handler {} {} loaded from {} (message type {})", spec.name(),
                        handler.className(), handler.version().orElse("(no version)"), handler.jar(),
                        handler.messageType().getName());
            }
            client = PulsarClients.create(manifest.pulsar());
            timer = new HeldRetries();
            for (int i = 0; i < manifest.subscriptions().size(); i++) {
                SubscriptionSpec spec = manifest.subscriptions().get(i);
                SdkHandlerPort port = SdkHandlerPort.of(handlers.get(i), spec);
                SubscriptionDriver driver =
                        SubscriptionDriver.start(client, spec, port, timer, metrics.forSubscription(spec.name()));
                drivers.add(driver);
                metrics.watchReceiverQueue(spec.name(), driver::messagesInReceiverQueue);
                health.watch(SubscriptionProbe.of(driver));
            }
            health.markStarted();
            return new Settle(manifest, metrics, health, loader, handlers, client, timer, drivers, grace);
        } catch (HandlerLoadException | PulsarClientException | RuntimeException e) {
            new Settle(manifest, metrics, health, loader, handlers, client, timer, drivers, Duration.ZERO).close();
            throw e;
        }
    }

    /** The drivers, in manifest order. */
    public List<SubscriptionDriver> drivers() {
        return List.copyOf(drivers);
    }

    /** The port /metrics, /livez and /readyz are served on (the bound one, when the manifest says 0). */
    public int httpPort() {
        return health.port();
    }

    public SettleMetrics metrics() {
        return metrics;
    }

    public Manifest manifest() {
        return manifest;
    }

    /**
     * Stops everything (docs/design.md, "Stopping"): every driver stops receiving at once; in-flight handler calls
     * get the grace period to finish; held retryAfter waits are abandoned (those messages stay unacknowledged and
     * come back); consumers are closed, which flushes acknowledgements; then handlers, the client and the class
     * loaders are closed.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        long started = System.nanoTime();
        // Readiness goes first, so Kubernetes stops routing to us before anything is closed.
        health.markStopping();
        // Drivers stop side by side: the grace is the whole runtime's, not each subscription's in turn.
        List<Thread> stopping = new ArrayList<>();
        for (SubscriptionDriver driver : drivers) {
            Thread thread = new Thread(() -> driver.stop(grace), "settle-stop-" + driver.subscription());
            stopping.add(thread);
            thread.start();
        }
        for (Thread thread : stopping) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        long drained = System.nanoTime();
        handlers.forEach(LoadedHandler::close);
        if (client != null) {
            // The consumers are closed and their acknowledgements flushed: nothing is left to wait for. The
            // client's own close then sits out Netty's two-second quiet period, so it runs in the background.
            client.closeAsync().exceptionally(e -> {
                log.warn("closing the Pulsar client failed", e);
                return null;
            });
        }
        if (timer != null) {
            timer.close();
        }
        loader.close();
        health.close();
        long done = System.nanoTime();
        log.info("stopped {} subscriptions in {} ms (drain {} ms, the rest {} ms)", drivers.size(),
                (done - started) / 1_000_000, (drained - started) / 1_000_000, (done - drained) / 1_000_000);
    }
}
