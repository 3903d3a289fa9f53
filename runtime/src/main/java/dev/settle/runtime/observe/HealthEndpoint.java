package dev.settle.runtime.observe;

import dev.settle.runtime.http.JettyService;
import dev.settle.runtime.http.Limits;
import dev.settle.runtime.http.Refusals;
import dev.settle.runtime.http.Request;
import dev.settle.runtime.http.Response;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.HttpSettings;
import io.prometheus.metrics.config.EscapingScheme;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves {@code /metrics}, {@code /livez} and {@code /readyz} on the manifest's bind address and port.
 *
 * <p>Served by a {@link JettyService} with the {@link Limits#probes()} limits: idle or trickling clients cannot hold
 * its workers, so a probe is answered while they hang on (two idle sockets held the JDK server's two threads and
 * failed the liveness probe, issue 32). {@code /metrics} is written by the Prometheus client's exposition formats, in
 * the format the scraper's {@code Accept} asks for. Exact paths (404 elsewhere), 405 for anything but GET and HEAD;
 * daemon threads that never keep the JVM alive.
 *
 * <ul>
 *   <li>{@code /livez}: 200 while every watched subscription's receive loop is alive and not every one of its
 *       handler threads ignores the interrupt of a call given up past its {@code handlerTimeout}; otherwise 503
 *       naming each failing subscription and why. Liveness does not
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

    /** A status and a short plain-text body ending in a newline. */
    record Verdict(int status, String body) {}

    private enum Phase {
        STARTING,
        STARTED,
        STOPPING
    }

    private JettyService server;
    private final PrometheusRegistry registry;
    private final ExpositionFormats formats = ExpositionFormats.init();
    /** Sorted, so bodies list subscriptions in a stable order. */
    private final Map<String, SubscriptionProbe> probes = new ConcurrentSkipListMap<>();

    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.STARTING);
    private final Duration startupTimeout;
    private final LongSupplier nanoTime;
    private final long createdNanos;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** Without detail in the bodies, each failing verdict's detail is logged once, when it changes. */
    private final boolean detail;

    private final Map<String, String> lastLogged = new java.util.concurrent.ConcurrentHashMap<>();

    private HealthEndpoint(SettleMetrics metrics, Duration startupTimeout, LongSupplier nanoTime, boolean detail) {
        this.detail = detail;
        this.registry = metrics.registry();
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
        HealthEndpoint endpoint = new HealthEndpoint(metrics, startupTimeout, nanoTime, http.probeDetail());
        try {
            // /livez and /readyz on workers of their own: a slow scrape or a flood of other requests cannot delay them.
            endpoint.server = JettyService.start(
                    "http",
                    address,
                    Limits.probes(),
                    Set.of("/livez", "/readyz"),
                    endpoint::handle,
                    new Refusals("http", log, reason -> metrics.httpRefused("http", reason.label())),
                    log);
        } catch (IOException e) {
            throw new IOException(
                    "cannot serve /metrics, /livez and /readyz on " + http.bindAddress() + ":" + http.port()
                            + " (http.bindAddress, http.port in the manifest): " + e.getMessage(),
                    e);
        }
        log.info("serving /metrics, /livez and /readyz on {}:{}", http.bindAddress(), endpoint.port());
        return endpoint;
    }

    /** The port bound, also when the manifest asked for 0. */
    public int port() {
        return server.port();
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
        server.close();
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
            // A call past its handlerTimeout is interrupted and settled as a timeout, so a long call alone says nothing
            // (it may have been extended); threads that ignore the interrupt, on every one of the subscription's
            // calling threads, leave it handling nothing.
            int stuck = probe.callsIgnoringInterrupt();
            if (stuck > 0 && stuck >= probe.concurrency()) {
                failing.add("subscription '" + probe.subscription() + "': " + stuck + " of its " + probe.concurrency()
                        + " handler threads ignore the interrupt of a call given up past handlerTimeout "
                        + DurationText.format(probe.handlerTimeout()) + " (the longest has run "
                        + DurationText.elapsed(probe.longestRunningCall()) + "): nothing more is handled");
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
            StringBuilder body = new StringBuilder("ready: " + probes.size() + " subscriptions connected\n");
            // Still ready: a subscription paused by its breaker is healthy, and restarting it would not help.
            for (SubscriptionProbe probe : probes.values()) {
                probe.breaker()
                        .ifPresent(breaker -> body.append("subscription '")
                                .append(probe.subscription())
                                .append("': ")
                                .append(breaker)
                                .append('\n'));
            }
            return new Verdict(200, body.toString());
        }
        return new Verdict(503, String.join("\n", disconnected) + "\n");
    }

    private Response handle(Request request) throws IOException {
        String method = request.method();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            return respond(new Verdict(405, "method " + method + " not allowed: use GET or HEAD\n"))
                    .with("Allow", "GET, HEAD");
        }
        switch (request.rawPath()) {
            case "/metrics":
                return metrics(request.header("Accept").orElse(null));
            case "/livez":
                return respond(terse(liveness(), "live"));
            case "/readyz":
                return respond(terse(readiness(), "ready"));
            default:
                return respond(new Verdict(404, "not found: try /metrics, /livez or /readyz\n"));
        }
    }

    /**
     * With {@code http.probeDetail: false}: a bare word for whoever can reach the port (the detail names
     * subscriptions, the broker, exception texts), and the detail in the log, once per change.
     */
    private Verdict terse(Verdict verdict, String word) {
        if (detail) {
            return verdict;
        }
        if (verdict.status() != 200) {
            String body = verdict.body().strip();
            if (!body.equals(lastLogged.put(word, body))) {
                log.info("/{}z answers {}: {}", word, verdict.status(), body.replace("\n", "; "));
            }
            return new Verdict(verdict.status(), "not " + word + "\n");
        }
        lastLogged.remove(word);
        return new Verdict(200, word + "\n");
    }

    private Response metrics(String accept) throws IOException {
        ExpositionFormatWriter writer = formats.findWriter(accept);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        writer.write(body, registry.scrape(), EscapingScheme.fromAcceptHeader(accept));
        return new Response(200, writer.getContentType(), Map.of("Cache-Control", "no-store"), body.toByteArray());
    }

    private static Response respond(Verdict verdict) {
        return Response.text(verdict.status(), verdict.body()).with("Cache-Control", "no-store");
    }
}
