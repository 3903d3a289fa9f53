package dev.settle.runtime;

import dev.settle.runtime.admin.AdminServer;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.driver.DriverWiring;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.driver.Tracing;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.journal.Journals;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.OwnedFolder;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.observe.SubscriptionProbe;
import dev.settle.runtime.publish.PulsarOutputs;
import dev.settle.runtime.time.SystemTime;
import dev.settle.runtime.trace.OpenTelemetryTracing;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.pulsar.PulsarVersion;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running Settle: a map of {@link RunningSubscription}s (a {@link Deployment}'s code opened, one driver each),
 * the Pulsar client, the health endpoint and the admin API. Data flows one way: manifest, then handlers, then
 * drivers, then consumer calls. Subscriptions are opened by {@link SubscriptionOpener}, reloaded by
 * {@link Reloads}, stopped side by side by {@link Stopping}.
 */
public final class Settle implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Settle.class);

    private final Deployment deployment;
    private final SettleMetrics metrics;
    private final HealthEndpoint health;
    private final SystemTime time;
    private final Duration grace;
    private final CompletableFuture<FatalError> fatal = new CompletableFuture<>();
    /** Every running subscription, by name, in the manifest's order. Guarded by this object's monitor. */
    private final Map<String, RunningSubscription> running = new LinkedHashMap<>();

    private final Reloads reloads;
    private final SubscriptionOpener opener;

    /** Null until the client is created (the handlers open before it); publishers ask for it at their first send. */
    private volatile PulsarClient client;
    /** The transactions of exactly-once subscriptions: its client is made at the first of them. */
    private final TransactionClient transactions;
    /** With {@code admin:} in the manifest: the live code and the admin API; null otherwise. */
    private LiveCode live;

    private AdminServer admin;
    private boolean closed;
    /** With {@code tracing: true}: traces every handling; null otherwise, and nothing of OpenTelemetry is loaded. */
    private final Tracing tracing;
    /** The settlement journal's writers, made once the client exists; one per journal topic in use. */
    private Journals journals;

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
        this.reloads = new Reloads(this, health, metrics.registry(), grace, time);
        this.opener = new SubscriptionOpener(() -> client, metrics, time);
        this.transactions = new TransactionClient(deployment.manifest().pulsar(), time);
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
                    outputsOf.put(spec.name(), settle.opener.outputs(spec));
                }
            }
            if (adminSettings.isPresent()) {
                // Before the handlers open: a restored upload runs instead of the manifest's handler. An
                // upload's publishers build their schemas in the loader of the type they publish. The data
                // folder's generations run without another check, so it must be this user's alone.
                OwnedFolder.create(adminSettings.get().dataDir(), "admin.dataDir");
                settle.live = LiveCode.restore(
                        deployment,
                        adminSettings.get(),
                        spec -> PortChain.context(spec, outputsOf.get(spec.name()), null),
                        metrics.registry(),
                        grace,
                        settle.time,
                        PulsarClients::create);
                settle.opener.live(settle.live);
            }
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (!spec.handler().function()) {
                    // Functions are initialised once the client exists: initialize may publish.
                    settle.running.put(
                            spec.name(), settle.opener.handler(deployment, spec, outputsOf.remove(spec.name())));
                }
            }
            settle.client = PulsarClients.create(deployment.manifest().pulsar());
            settle.journals = Journals.of(settle.client, settle.time);
            settle.reloads.started(deployment);
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (spec.handler().function()) {
                    settle.running.put(spec.name(), settle.opener.function(deployment, spec));
                }
            }
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                settle.startDriver(settle.running.get(spec.name()));
            }
            if (settle.live != null) {
                settle.admin = AdminServer.start(
                        adminSettings.get(), settle.live, reason -> metrics.httpRefused("admin", reason));
                // With the Pulsar store: from now on, every record written by any runtime or command is followed.
                settle.live.follow();
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

    /** Starts a subscription's driver on its running code and has it watched; at start and by a reload. */
    private void startDriver(RunningSubscription subscription) {
        SubscriptionSpec spec = subscription.spec();
        boolean exactlyOnce = spec.guarantee() == Guarantee.EXACTLY_ONCE;
        if (exactlyOnce) {
            transactions.start();
        }
        // An exactly-once subscription subscribes once its outputs can be written and transactions can be begun.
        Supplier<Optional<String>> notReady = exactlyOnce
                ? () -> subscription.outputs().notReady().or(transactions::notReady)
                : subscription.outputs()::notReady;
        DriverWiring wiring = DriverWiring.NONE
                .withOutputs(notReady, subscription.outputs()::flush)
                .withTransactions(exactlyOnce ? transactions : null)
                .withTracing(tracing)
                .withJournal(journals.forSubscription(spec));
        SubscriptionDriver driver = subscription.start((port, schema) -> SubscriptionDriver.start(
                client, spec, port, schema, time, metrics.forSubscription(spec.name()), wiring));
        driver.fatalError().thenAccept(error -> fatal.complete(new FatalError(spec.name(), error)));
        metrics.watchReceiverQueue(spec.name(), driver::messagesInReceiverQueue);
        metrics.watchConnection(spec.name(), driver::isConnected);
        health.watch(SubscriptionProbe.of(driver));
    }

    /**
     * A reload's: adds an opened subscription and starts its driver; when the driver cannot start, takes it out again
     * and throws (its code and outputs are the caller's to close). Under this object's monitor.
     */
    void startSubscription(RunningSubscription subscription) {
        running.put(subscription.name(), subscription);
        try {
            startDriver(subscription);
        } catch (RuntimeException e) {
            stopSubscription(subscription.name());
            throw e;
        }
    }

    /**
     * A reload's: drains and stops a subscription's driver (which flushes its acks) and takes it out of the running
     * ones; its code and outputs are the caller's to close. Under this object's monitor.
     */
    RunningSubscription stopSubscription(String name) {
        RunningSubscription subscription = running.remove(name);
        health.unwatch(name);
        metrics.unwatchReceiverQueue(name);
        subscription.stop(grace);
        return subscription;
    }

    /** A running subscription, by name. Under this object's monitor. */
    RunningSubscription running(String name) {
        return running.get(name);
    }

    SubscriptionOpener opener() {
        return opener;
    }

    boolean isClosed() {
        return closed;
    }

    /** What a manifest reload did. */
    public enum ReloadResult {
        /** Some subscriptions were started, stopped, swapped or restarted. */
        APPLIED,
        /**
         * Some subscriptions could not be changed as the new manifest says (their code or consumer did not open): each
         * of them runs on as it was, or, added, is retried with backoff and unready meanwhile; the others were
         * applied. The log names each with its cause; the next reload tries them again.
         */
        FAILED,
        /** The new manifest runs exactly what runs already. */
        UNCHANGED,
        /** Invalid, or it changes what needs a restart of the process: nothing running was touched. */
        REFUSED
    }

    /**
     * Reloads the manifest (docs/live-code.md, "Manifest reload"): checked exactly as at start; refused as a whole
     * (every problem logged, nothing running touched) when invalid or when a section other than
     * {@code subscriptions} changed; otherwise each subscription is added, drained and stopped, swapped with its
     * consumer open, restarted, or left alone, as the new manifest says.
     */
    public ReloadResult reload(Path file, Map<String, String> environment) {
        return reloads.reload(file, environment);
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
    public synchronized String describeDrivers() {
        StringBuilder text = new StringBuilder();
        running.values()
                .forEach(subscription -> text.append(subscription.describe()).append('\n'));
        return text.toString();
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
        return Optional.ofNullable(live);
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
        if (live != null) {
            // Nor one that another runtime's record asks for.
            live.stopFollowing(grace);
        }
        // No added subscription is retried from now on.
        reloads.close();
        List<RunningSubscription> all = new ArrayList<>(running.values());
        Stopping.drain(all, grace);
        long drained = time.nanoTime();
        Stopping.closeCode(all, started + grace.toNanos(), grace, time);
        for (Deployment reloaded : reloads.deployments) {
            reloaded.close();
        }
        all.forEach(RunningSubscription::closeOutputs);
        if (tracing != null) {
            // Every handling is settled and every output sent: their spans have ended, and are exported now.
            tracing.close();
        }
        if (journals != null) {
            // Every delivery is settled: the last records are sent before the client goes.
            journals.close();
        }
        if (live != null) {
            live.close();
        }
        // After the drivers: no delivery begins or commits a transaction any more.
        transactions.close();
        if (client != null) {
            // The consumers are closed and their acknowledgements flushed: nothing is left to wait for. The
            // client's own close then sits out Netty's two-second quiet period, so it runs in the background.
            client.closeAsync().exceptionally(e -> {
                log.warn("closing the Pulsar client failed", e);
                return null;
            });
        }
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
