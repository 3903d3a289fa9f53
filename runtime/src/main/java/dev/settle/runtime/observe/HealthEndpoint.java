package dev.settle.runtime.observe;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.HttpSettings;
import io.prometheus.metrics.exporter.httpserver.MetricsHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves {@code /metrics}, {@code /livez} and {@code /readyz} on the manifest's bind address and port.
 *
 * <p>One JDK {@link HttpServer} with the Prometheus client's {@link MetricsHandler} mounted at {@code /metrics}.
 * Not the client's {@code HTTPServer}: that one answers every unknown path with its own page and adds
 * {@code /-/healthy}; owning the server gives exact paths (404 elsewhere), 405 for anything but GET and HEAD, and
 * a small daemon pool that never keeps the JVM alive.
 *
 * <ul>
 *   <li>{@code /livez}: 200 while every watched subscription's receive loop is alive and no handler call has run
 *       past its {@code handlerTimeout}; otherwise 503 naming each failing subscription and why. Liveness does not
 *       depend on the broker: a restart would not bring the broker back.
 *   <li>{@code /readyz}: 503 until {@link #markStarted()}, then 200 while every watched consumer is connected and
 *       503 naming the ones that are not; 503 for good after {@link #markStopping()}, so Kubernetes stops routing
 *       before the drain closes anything.
 * </ul>
 *
 * <p>Thread-safe. Start it before the first consumer subscribes, so {@code /livez} answers during a slow start.
 */
public final class HealthEndpoint implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HealthEndpoint.class);
    private static final int HTTP_THREADS = 2;

    /** A status and a short plain-text body ending in a newline. */
    record Verdict(int status, String body) {}

    private enum Phase {
        STARTING,
        STARTED,
        STOPPING
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final HttpHandler metricsHandler;
    /** Sorted, so bodies list subscriptions in a stable order. */
    private final Map<String, SubscriptionProbe> probes = new ConcurrentSkipListMap<>();

    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.STARTING);
    private final Duration startupTimeout;
    private final LongSupplier nanoTime;
    private final long createdNanos;
    private final AtomicBoolean closed = new AtomicBoolean();

    private HealthEndpoint(
            HttpServer server,
            ExecutorService executor,
            SettleMetrics metrics,
            Duration startupTimeout,
            LongSupplier nanoTime) {
        this.server = server;
        this.executor = executor;
        this.metricsHandler = new MetricsHandler(metrics.registry());
        this.startupTimeout = startupTimeout;
        this.nanoTime = nanoTime;
        this.createdNanos = nanoTime.getAsLong();
    }

    /**
     * Binds {@code http.bindAddress():http.port()} (port 0: a free port, see {@link #port()}) and starts serving.
     *
     * @throws IOException when the address cannot be bound, such as a port in use
     */
    public static HealthEndpoint start(HttpSettings http, SettleMetrics metrics) throws IOException {
        return start(http, metrics, Duration.ofMinutes(5), System::nanoTime);
    }

    /**
     * As {@link #start(HttpSettings, SettleMetrics)}; {@code /livez} fails once the runtime has been starting (its
     * handlers opening) for longer than {@code startupTimeout}, so that a startup probe restarts a stuck pod.
     */
    public static HealthEndpoint start(HttpSettings http, SettleMetrics metrics, Duration startupTimeout)
            throws IOException {
        return start(http, metrics, startupTimeout, System::nanoTime);
    }

    static HealthEndpoint start(
            HttpSettings http, SettleMetrics metrics, Duration startupTimeout, LongSupplier nanoTime)
            throws IOException {
        Objects.requireNonNull(metrics, "metrics");
        InetSocketAddress address = new InetSocketAddress(http.bindAddress(), http.port());
        HttpServer server;
        try {
            server = HttpServer.create(address, 0);
        } catch (IOException e) {
            throw new IOException(
                    "cannot serve /metrics, /livez and /readyz on " + http.bindAddress() + ":" + http.port()
                            + " (http.bindAddress, http.port in the manifest): " + e.getMessage(),
                    e);
        }
        ExecutorService executor = Executors.newFixedThreadPool(HTTP_THREADS, daemonThreads());
        HealthEndpoint endpoint = new HealthEndpoint(server, executor, metrics, startupTimeout, nanoTime);
        server.createContext("/", endpoint::handle);
        server.setExecutor(executor);
        server.start();
        log.info("serving /metrics, /livez and /readyz on {}:{}", http.bindAddress(), endpoint.port());
        return endpoint;
    }

    /** The port bound, also when the manifest asked for 0. */
    public int port() {
        return server.getAddress().getPort();
    }

    /** Includes {@code probe} in both checks; replaces an earlier probe of the same subscription. */
    public void watch(SubscriptionProbe probe) {
        probes.put(probe.subscription(), probe);
    }

    /** Leaves {@code subscription} out of both checks, as when it is stopped on its own. */
    public void unwatch(String subscription) {
        probes.remove(subscription);
    }

    /** Every consumer has been started: {@code /readyz} now follows their connections. */
    public void markStarted() {
        phase.compareAndSet(Phase.STARTING, Phase.STARTED);
    }

    /** The drain begins: {@code /readyz} answers 503 from now on, whatever the consumers do. */
    public void markStopping() {
        phase.set(Phase.STOPPING);
    }

    /** Stops serving at once; idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        server.stop(0);
        executor.shutdownNow();
    }

    Verdict liveness() {
        List<String> failing = new ArrayList<>();
        Duration starting = Duration.ofNanos(nanoTime.getAsLong() - createdNanos);
        if (phase.get() == Phase.STARTING && starting.compareTo(startupTimeout) > 0) {
            failing.add("still starting after " + DurationText.elapsed(starting) + ", past startup.timeout "
                    + DurationText.format(startupTimeout) + ": a handler's open() has not returned");
        }
        for (SubscriptionProbe probe : probes.values()) {
            if (!probe.alive()) {
                failing.add("subscription '" + probe.subscription() + "': receive loop died: "
                        + probe.failure().orElse("no reason given"));
                continue;
            }
            Duration running = probe.longestRunningCall();
            Duration timeout = probe.handlerTimeout();
            if (running.compareTo(timeout) > 0) {
                failing.add("subscription '" + probe.subscription() + "': a handler call has run "
                        + DurationText.elapsed(running) + ", past handlerTimeout " + DurationText.format(timeout));
            }
        }
        if (failing.isEmpty()) {
            return new Verdict(200, "live: " + probes.size() + " subscriptions\n");
        }
        return new Verdict(503, String.join("\n", failing) + "\n");
    }

    Verdict readiness() {
        switch (phase.get()) {
            case STARTING:
                return new Verdict(503, "not ready: the handlers are still opening\n");
            case STOPPING:
                return new Verdict(503, "not ready: stopping\n");
            default:
                break;
        }
        List<String> disconnected = new ArrayList<>();
        for (SubscriptionProbe probe : probes.values()) {
            if (!probe.connected()) {
                disconnected.add("subscription '" + probe.subscription() + "': "
                        + probe.waitingFor()
                                .map(reason -> "not subscribed yet: " + reason)
                                .orElse("consumer not connected to the broker"));
            }
        }
        if (disconnected.isEmpty()) {
            return new Verdict(200, "ready: " + probes.size() + " subscriptions connected\n");
        }
        return new Verdict(503, String.join("\n", disconnected) + "\n");
    }

    private void handle(HttpExchange exchange) {
        try {
            String method = exchange.getRequestMethod();
            if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                respond(exchange, new Verdict(405, "method " + method + " not allowed: use GET or HEAD\n"));
                return;
            }
            switch (exchange.getRequestURI().getPath()) {
                case "/metrics":
                    metricsHandler.handle(exchange);
                    break;
                case "/livez":
                    respond(exchange, liveness());
                    break;
                case "/readyz":
                    respond(exchange, readiness());
                    break;
                default:
                    respond(exchange, new Verdict(404, "not found: try /metrics, /livez or /readyz\n"));
                    break;
            }
        } catch (IOException e) {
            // The client hung up before the answer was written (a probe that timed out, a scraper that gave up):
            // its affair, not a fault here. A stack trace at each one flooded the log (the reliability suite's
            // network-cut test saw "Broken pipe" traces from its own probes).
            log.debug(
                    "answering {} {}: the client went away ({})",
                    exchange.getRequestMethod(),
                    exchange.getRequestURI(),
                    e.toString());
        } catch (RuntimeException e) {
            // The JDK server would drop the connection without a word; leave a trace, and a 500 if still possible.
            log.warn("answering {} {} failed", exchange.getRequestMethod(), exchange.getRequestURI(), e);
            try {
                exchange.sendResponseHeaders(500, -1);
            } catch (IOException | RuntimeException headersAlreadySent) {
                // The status line is out already; closing the exchange below ends the response.
            }
        } finally {
            exchange.close();
        }
    }

    private static void respond(HttpExchange exchange, Verdict verdict) throws IOException {
        byte[] body = verdict.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        if (exchange.getRequestMethod().equals("HEAD")) {
            exchange.sendResponseHeaders(verdict.status(), -1);
            return;
        }
        exchange.sendResponseHeaders(verdict.status(), body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static ThreadFactory daemonThreads() {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, "settle-http-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
