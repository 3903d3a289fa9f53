package dev.settle.runtime;

import dev.settle.runtime.admin.AdminServer;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.driver.Tracing;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.OwnedFolder;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.preflight.BacklogStats;
import dev.settle.runtime.publish.PulsarOutputs;
import dev.settle.runtime.time.SystemTime;
import dev.settle.runtime.trace.OpenTelemetryTracing;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.pulsar.PulsarVersion;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running Settle: its {@link Subscriptions} (a {@link Deployment}'s code opened, one driver each, on one Pulsar
 * client), the health endpoint, the admin API and manifest {@link Reloads}. It starts them in order and stops them in
 * the reverse; data flows one way: manifest, then handlers, then drivers, then consumer calls.
 */
public final class Settle implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Settle.class);

    private final Deployment deployment;
    private final SettleMetrics metrics;
    private final HealthEndpoint health;
    private final SystemTime time;
    private final Duration grace;
    private final CompletableFuture<FatalError> fatal = new CompletableFuture<>();
    private final Subscriptions subscriptions;
    private final Reloads reloads;

    private AdminServer admin;
    /** Feeds the drain-time metrics from the broker's stats; null without pulsar.adminUrl. */
    private DrainPoller drains;
    /** Guarded by this object's monitor. */
    private boolean closed;
    /** With {@code tracing: true}: traces every handling; null otherwise, and nothing of OpenTelemetry is loaded. */
    private final Tracing tracing;

    /** A subscription whose handler hit an error the process cannot be trusted to survive, such as out of memory. */
    public record FatalError(String subscription, Throwable error) {}

    private Settle(
            Deployment deployment,
            SettleMetrics metrics,
            HealthEndpoint health,
            SystemTime time,
            Duration grace,
            Tracing tracing) {
        this.deployment = deployment;
        this.tracing = tracing;
        this.metrics = metrics;
        this.health = health;
        this.time = time;
        this.grace = grace;
        this.subscriptions = new Subscriptions(
                deployment.manifest().pulsar(),
                tracing,
                metrics,
                health,
                time,
                grace,
                (subscription, error) -> fatal.complete(new FatalError(subscription, error)));
        this.reloads = new Reloads(subscriptions, health, metrics.registry(), grace, time);
    }

    /**
     * Serves /metrics, /livez and /readyz, opens every handler of {@code deployment}, then subscribes every
     * driver; /readyz turns ready once all are subscribed and connected. On any failure everything started so far
     * is closed again and nothing keeps running. The deployment stays its caller's to close, after this.
     *
     * @param grace how long in-flight handler calls (and then the handlers' {@code close}) may run on after a stop
     *     is asked for
     * @throws HandlerLoadException when a handler's {@code open} fails
     * @throws PulsarClientException when the client cannot be created (a setting it refuses); the broker need not
     *     be up: each subscription waits for it, unready
     * @throws IOException when the HTTP endpoint cannot be bound
     */
    public static Settle start(Deployment deployment, Duration grace)
            throws HandlerLoadException, PulsarClientException, IOException {
        return start(deployment, grace, OpenTelemetryTracing::autoconfigured);
    }

    /**
     * As {@link #start(Deployment, Duration)}, tracing (when the manifest has {@code tracing: true}) through what
     * {@code tracing} gives, such as a test's in-memory exporter; it is asked only then, and closed with this.
     */
    public static Settle start(Deployment deployment, Duration grace, Supplier<Tracing> tracing)
            throws HandlerLoadException, PulsarClientException, IOException {
        // First: a tracing configuration the SDK refuses stops the start before anything is opened.
        Tracing traced = deployment.manifest().tracing() ? tracing.get() : null;
        SettleMetrics metrics = new SettleMetrics();
        metrics.buildInfo(version(), PulsarVersion.getVersion());
        // First, so /livez answers while consumers are still subscribing.
        HealthEndpoint health;
        try {
            health = HealthEndpoint.start(
                    deployment.manifest().http(),
                    metrics,
                    deployment.manifest().startup().timeout());
        } catch (IOException | RuntimeException e) {
            if (traced != null) {
                traced.close();
            }
            throw e;
        }
        Settle settle = new Settle(deployment, metrics, health, new SystemTime(), grace, traced);
        Optional<AdminSettings> adminSettings = deployment.manifest().admin();
        Map<String, PulsarOutputs> outputsOf = new LinkedHashMap<>();
        try {
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (!spec.handler().function()) {
                    outputsOf.put(spec.name(), settle.subscriptions.opener().outputs(spec));
                }
            }
            if (adminSettings.isPresent()) {
                // Before the handlers open: a restored upload runs instead of the manifest's handler. An
                // upload's publishers build their schemas in the loader of the type they publish. The data
                // folder's generations run without another check, so it must be this user's alone.
                OwnedFolder.create(adminSettings.get().dataDir(), "admin.dataDir");
                settle.subscriptions.live(LiveCode.restore(
                        deployment,
                        adminSettings.get(),
                        spec -> PortChain.context(spec, outputsOf.get(spec.name()), null),
                        metrics.registry(),
                        grace,
                        settle.time,
                        PulsarClients::create));
            }
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (!spec.handler().function()) {
                    // Functions are initialised once the client exists: initialize may publish.
                    settle.subscriptions.add(
                            settle.subscriptions.opener().handler(deployment, spec, outputsOf.remove(spec.name())));
                }
            }
            settle.subscriptions.connect(
                    PulsarClients.create(deployment.manifest().pulsar()));
            settle.subscriptions.checkBroker(deployment.manifest());
            Optional<BacklogStats> backlogs =
                    BacklogStats.of(deployment.manifest().pulsar());
            if (backlogs.isPresent()) {
                settle.drains =
                        DrainPoller.start(backlogs.get(), metrics, settle.subscriptions::runningSpecs, settle.time);
            }
            settle.reloads.started(deployment);
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (spec.handler().function()) {
                    settle.subscriptions.add(settle.subscriptions.opener().function(deployment, spec));
                }
            }
            settle.subscriptions.startDrivers(deployment.subscriptions());
            Optional<LiveCode> live = settle.subscriptions.live();
            if (live.isPresent()) {
                settle.admin = AdminServer.start(
                        adminSettings.get(),
                        new AdminServer.Sources(
                                live.get(),
                                settle.subscriptions::effectiveConfiguration,
                                settle.subscriptions::breaker,
                                settle.subscriptions::functions),
                        reason -> metrics.httpRefused("admin", reason));
                // With the Pulsar store: from now on, every record written by any runtime or command is followed.
                live.get().follow();
            }
            health.markStarted();
            return settle;
        } catch (HandlerLoadException | IOException | RuntimeException e) {
            // The outputs of handlers not opened yet are nobody's: the opened ones close with their subscription.
            outputsOf.values().forEach(PulsarOutputs::close);
            settle.closeNow();
            throw e;
        }
    }

    /**
     * Reloads the manifest (docs/live-code.md, "Manifest reload"): checked exactly as at start; refused as a whole
     * (every problem logged, nothing running touched) when invalid or when a section other than
     * {@code subscriptions} changed; otherwise each subscription is added, drained and stopped, swapped with its
     * consumer open, restarted, or left alone, as the new manifest says.
     */
    public ReloadResult reload(Path file, Map<String, String> environment) {
        // The subscriptions the reload starts wait for the checks of the manifest it leaves running, unready; the
        // running ones are not touched.
        subscriptions.pauseBrokerChecks();
        ReloadResult result = reloads.reload(file, environment);
        subscriptions.checkBroker(reloads.manifest());
        return result;
    }

    /** A running subscription, by name; null when none runs by that name. */
    RunningSubscription running(String name) {
        return subscriptions.get(name);
    }

    /** Settle's version, from its JAR's manifest; {@code unknown} when run from classes (tests, an IDE). */
    public static String version() {
        String version = Settle.class.getPackage().getImplementationVersion();
        return version == null ? "unknown" : version;
    }

    /**
     * Each running subscription's driver as it stands now, one a line: what a test prints when a message it waits for
     * is not handled in time, to tell one never dispatched from one stuck here.
     */
    public String describeDrivers() {
        return subscriptions.describe();
    }

    /** The port /metrics, /livez and /readyz are served on (the bound one, when the manifest says 0). */
    public int httpPort() {
        return health.port();
    }

    /** The admin API's port, when the manifest turns it on. */
    public Optional<Integer> adminPort() {
        return Optional.ofNullable(admin).map(AdminServer::port);
    }

    /** The live code, when the manifest turns the admin API on. */
    public Optional<LiveCode> live() {
        return subscriptions.live();
    }

    public SettleMetrics metrics() {
        return metrics;
    }

    public Deployment deployment() {
        return deployment;
    }

    /**
     * Completes when a handler hits a {@link VirtualMachineError} (out of memory, a stack overflow): the process
     * cannot be trusted to go on, so its owner should {@link #close()} and exit non-zero, and let it be restarted.
     */
    public CompletableFuture<FatalError> fatalError() {
        return fatal;
    }

    /**
     * Stops everything (docs/design.md, "Stopping"): every driver stops receiving at once; in-flight handler calls
     * get the grace period to finish; held waits are abandoned (those messages stay unacknowledged and come back);
     * consumers are closed, which flushes acknowledgements; then the handlers are closed with what is left of the
     * grace, and the client. The deployment's class loaders stay open: its owner closes them.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closeNow();
    }

    private synchronized void closeNow() {
        closed = true;
        long started = time.nanoTime();
        // Readiness goes first, so Kubernetes stops routing to us before anything is closed.
        health.markStopping();
        if (admin != null) {
            // No swap may begin while the drivers stop.
            admin.close();
        }
        Optional<LiveCode> live = subscriptions.live();
        // Nor one that another runtime's record asks for.
        live.ifPresent(code -> code.stopFollowing(grace));
        // Waits for a reload under way; nothing starts from now on, and no added subscription is retried.
        List<RunningSubscription> all = subscriptions.close();
        reloads.close();
        subscriptions.drain(all);
        long drained = time.nanoTime();
        subscriptions.closeCode(all, started + grace.toNanos());
        reloads.closeDeployments();
        all.forEach(RunningSubscription::closeOutputs);
        if (tracing != null) {
            // Every handling is settled and every output sent: their spans have ended, and are exported now.
            tracing.close();
        }
        live.ifPresent(LiveCode::close);
        // After the drivers: no delivery begins or commits a transaction any more; the consumers are closed and
        // their acknowledgements flushed, so the client has nothing left to wait for.
        if (drains != null) {
            drains.close();
        }
        subscriptions.closeClients();
        time.close();
        health.close();
        long done = time.nanoTime();
        log.info(
                "stopped {} subscriptions in {} ms (drain {} ms, the rest {} ms)",
                all.size(),
                (done - started) / 1_000_000,
                (drained - started) / 1_000_000,
                (done - drained) / 1_000_000);
    }
}
