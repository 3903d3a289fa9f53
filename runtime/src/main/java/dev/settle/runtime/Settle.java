package dev.settle.runtime;

import dev.settle.runtime.admin.AdminServer;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.function.FunctionPort;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.live.CurrentGeneration;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.live.ManifestChange;
import dev.settle.runtime.live.SwapRefusedException;
import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.OwnedFolder;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.observe.SubscriptionProbe;
import dev.settle.runtime.publish.PulsarOutputs;
import dev.settle.runtime.time.SystemTime;
import dev.settle.sdk.HandlerContext;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.PulsarVersion;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running Settle: a {@link Deployment}'s handlers opened, one Pulsar client, and one driver per subscription.
 * Data flows one way: manifest, then handlers, then drivers, then consumer calls.
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
    /** Manifest reloads: the running manifest, its JARs' sha256, the deployments reloads made (docs/live-code.md). */
    private final Reloads reloads;

    /** Null until the client is created (the handlers open before it). */
    private PulsarClient client;
    /** With {@code admin:} in the manifest: the live code and the admin API; null otherwise. */
    private LiveCode live;

    private AdminServer admin;
    private boolean closed;

    /** A subscription whose handler hit an error the process cannot be trusted to survive, such as out of memory. */
    public record FatalError(String subscription, Throwable error) {}

    private Settle(
            Deployment deployment, SettleMetrics metrics, HealthEndpoint health, SystemTime time, Duration grace) {
        this.deployment = deployment;
        this.metrics = metrics;
        this.health = health;
        this.time = time;
        this.grace = grace;
        this.reloads = new Reloads(metrics.registry());
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
        SettleMetrics metrics = new SettleMetrics();
        metrics.buildInfo(version(), PulsarVersion.getVersion());
        // First, so /livez answers while consumers are still subscribing.
        HealthEndpoint health = HealthEndpoint.start(
                deployment.manifest().http(),
                metrics,
                deployment.manifest().startup().timeout());
        CompletableFuture<PulsarClient> connecting = new CompletableFuture<>();
        Settle settle = new Settle(deployment, metrics, health, new SystemTime(), grace);
        Optional<AdminSettings> adminSettings = deployment.manifest().admin();
        // Publishers ask for the client at their first message, once it exists.
        Map<String, PulsarOutputs> outputsOf = new LinkedHashMap<>();
        try {
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (!spec.handler().function()) {
                    outputsOf.put(
                            spec.name(),
                            new PulsarOutputs(
                                    () -> connecting.getNow(null),
                                    "subscription '" + spec.name() + "'",
                                    spec.concurrency()));
                }
            }
            if (adminSettings.isPresent()) {
                // Before the handlers open: a restored upload runs instead of the manifest's handler. An upload's
                // publishers build their schemas in the loader of the type they publish. The data folder's
                // generations run without another check, so it must be this user's alone (OwnedFolder).
                OwnedFolder.create(adminSettings.get().dataDir(), "admin.dataDir");
                settle.live = LiveCode.restore(
                        deployment,
                        adminSettings.get(),
                        spec -> SubscriptionContext.of(spec, outputsOf.get(spec.name()), null),
                        metrics.registry(),
                        grace,
                        settle.time);
            }
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (!spec.handler().function()) {
                    // Functions are initialised once the client exists: initialize may publish.
                    settle.openHandler(deployment, spec, outputsOf.remove(spec.name()));
                }
            }
            settle.client = PulsarClients.create(deployment.manifest().pulsar());
            connecting.complete(settle.client);
            settle.reloads.started(deployment);
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (spec.handler().function()) {
                    settle.running.put(spec.name(), settle.initialiseFunction(deployment, spec));
                }
            }
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                settle.startDriver(settle.running.get(spec.name()));
            }
            if (settle.live != null) {
                settle.admin = AdminServer.start(adminSettings.get(), settle.live);
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
     * Opens a subscription's handler (unless the live code restored an upload to run instead) with {@code outputs}
     * to publish to, and adds the subscription, not started yet.
     */
    private void openHandler(Deployment from, SubscriptionSpec spec, PulsarOutputs outputs)
            throws HandlerLoadException {
        CurrentGeneration code;
        LoadedHandler handler = from.handler(spec.name());
        if (live != null && live.runsUpload(spec.name())) {
            code = live.code(spec.name(), handler);
        } else {
            try {
                handler.open(SubscriptionContext.of(spec, outputs, handler.classLoader()));
            } catch (HandlerLoadException | RuntimeException e) {
                outputs.close();
                throw e;
            }
            log.info(
                    "subscription '{}': handler {} {} loaded from {} (message type {})",
                    spec.name(),
                    handler.className(),
                    handler.version().orElse("(no version)"),
                    handler.jar(),
                    handler.messageType().getName());
            code = live != null
                    ? live.code(spec.name(), handler)
                    : CurrentGeneration.ofManifest(handler, spec, () -> from.release(spec.name()), time.instant());
        }
        running.put(spec.name(), RunningSubscription.handler(spec, code, outputs));
    }

    /** A subscription's Pulsar Function, initialised here with outputs of its own (the client exists by now). */
    private RunningSubscription initialiseFunction(Deployment from, SubscriptionSpec spec) throws HandlerLoadException {
        LoadedFunction function = from.function(spec.name()).orElseThrow();
        PulsarOutputs outputs =
                new PulsarOutputs(() -> client, "subscription '" + spec.name() + "'", spec.concurrency());
        FunctionPort port = new FunctionPort(
                function,
                spec,
                outputs,
                (name, value) -> metrics.functionMetric(spec.name(), name, value),
                System::getenv,
                LoggerFactory.getLogger(function.className()),
                FunctionPort.StateReader.of(() -> client));
        try {
            port.open();
        } catch (HandlerLoadException | RuntimeException e) {
            port.close();
            outputs.close();
            throw e;
        }
        log.info(
                "subscription '{}': function {} {} loaded from {} ({} to {}{})",
                spec.name(),
                function.className(),
                function.version().orElse("(no version)"),
                function.jar(),
                function.inputType().getName(),
                function.outputType().getName(),
                spec.function().output().map(topic -> ", published to " + topic).orElse(", no output"));
        return RunningSubscription.function(spec, new RunningSubscription.FunctionParts(port, port::close), outputs);
    }

    /** Starts a subscription's driver on its running code and has it watched; at start and by a reload. */
    private void startDriver(RunningSubscription subscription) {
        SubscriptionSpec spec = subscription.spec();
        SubscriptionDriver driver = subscription.start((port, schema) ->
                SubscriptionDriver.start(client, spec, port, schema, time, metrics.forSubscription(spec.name())));
        driver.fatalError().thenAccept(error -> fatal.complete(new FatalError(spec.name(), error)));
        metrics.watchReceiverQueue(spec.name(), driver::messagesInReceiverQueue);
        metrics.watchConnection(spec.name(), driver::isConnected);
        health.watch(SubscriptionProbe.of(driver));
    }

    /** What a manifest reload did. */
    public enum ReloadResult {
        /** Some subscriptions were started, stopped, swapped or restarted. */
        APPLIED,
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
    public synchronized ReloadResult reload(Path file, Map<String, String> environment) {
        if (closed) {
            return ReloadResult.REFUSED;
        }
        long started = System.nanoTime();
        Deployment next;
        try {
            next = Preflight.check(file, environment);
        } catch (ManifestException refused) {
            log.error("manifest {} not reloaded: it has problems; the running subscriptions are untouched", file);
            refused.problems().forEach(problem -> log.error("{}", problem));
            return refuse();
        } catch (IOException unreadable) {
            log.error(
                    "manifest {} not reloaded: cannot read it ({}); the running subscriptions are untouched",
                    file,
                    unreadable.toString());
            return refuse();
        }
        Map<String, String> sha256 = Reloads.digests(next.manifest());
        ManifestChange change = ManifestChange.between(reloads.manifest, reloads.sha256, next.manifest(), sha256);
        Optional<String> refusal = refusal(change, next.manifest());
        if (refusal.isPresent()) {
            log.error("manifest {} not reloaded: {}; the running subscriptions are untouched", file, refusal.get());
            next.close();
            return refuse();
        }
        if (change.isEmpty()) {
            log.info("manifest {} reloaded: nothing changed", file);
            next.close();
            reloads.count("unchanged");
            return ReloadResult.UNCHANGED;
        }
        Map<String, SubscriptionSpec> specs = new LinkedHashMap<>();
        next.subscriptions().forEach(spec -> specs.put(spec.name(), spec));
        for (Map.Entry<String, ManifestChange.Kind> entry :
                change.subscriptions().entrySet()) {
            String name = entry.getKey();
            SubscriptionSpec spec = specs.get(name);
            try {
                switch (entry.getValue()) {
                    case UNCHANGED -> {
                        if (next.function(name).isEmpty()) {
                            // Loaded by the new deployment and never to run: its loader closes unless in use.
                            next.release(name);
                        }
                    }
                    case REMOVED -> stopSubscription(name, true);
                    case ADDED -> startSubscription(next, spec);
                    case SWAP -> swapSubscription(next, spec, sha256.get(name));
                    case RESTART -> {
                        RunningSubscription stopped = stopSubscription(name, live == null);
                        if (live == null) {
                            startSubscription(next, spec);
                        } else {
                            // With the admin API, the running generation (an upload, perhaps) goes on running.
                            next.release(name);
                            RunningSubscription restarted = stopped.withSpec(spec);
                            running.put(name, restarted);
                            startDriver(restarted);
                        }
                    }
                }
            } catch (HandlerLoadException | SwapRefusedException | IOException | RuntimeException e) {
                log.error(
                        "subscription '{}': the reload could not {} it: {}",
                        name,
                        entry.getValue().name().toLowerCase(java.util.Locale.ROOT),
                        e.getMessage());
            }
        }
        reloads.deployments.add(next);
        reloads.manifest = next.manifest();
        reloads.sha256 = sha256;
        reloads.count("applied");
        log.info("manifest {} reloaded in {} ms: {}", file, (System.nanoTime() - started) / 1_000_000, change);
        return ReloadResult.APPLIED;
    }

    private ReloadResult refuse() {
        reloads.count("refused");
        return ReloadResult.REFUSED;
    }

    /** Why a valid manifest cannot be reloaded as a whole, if it cannot. */
    private Optional<String> refusal(ManifestChange change, dev.settle.runtime.manifest.Manifest next) {
        if (!change.sectionsChanged().isEmpty()) {
            return Optional.of(String.join(", ", change.sectionsChanged())
                    + " changed, which a reload does not apply: restart settle for that (a reload applies changes to"
                    + " subscriptions only)");
        }
        if (live != null) {
            List<String> needRestart = new ArrayList<>(change.of(ManifestChange.Kind.ADDED));
            needRestart.addAll(change.of(ManifestChange.Kind.REMOVED));
            Map<String, SubscriptionSpec> before = new LinkedHashMap<>();
            reloads.manifest.subscriptions().forEach(spec -> before.put(spec.name(), spec));
            // A restart keeps the running generation's port, which decodes with the schema and reports the
            // attempts it was made with: a change of those needs a new port, so a restart of the process.
            next.subscriptions().stream()
                    .filter(spec -> change.subscriptions().get(spec.name()) == ManifestChange.Kind.RESTART)
                    .filter(spec -> change.codeChanged().contains(spec.name())
                            || !spec.handler()
                                    .schema()
                                    .equals(before.get(spec.name()).handler().schema())
                            || !spec.deadLetter().equals(before.get(spec.name()).deadLetter()))
                    .forEach(spec -> needRestart.add(spec.name()));
            if (!needRestart.isEmpty()) {
                return Optional.of("with admin: on, a reload swaps code and restarts consumers with their running"
                        + " generation, but cannot add or remove a subscription, change its code and its consumer"
                        + " at once, nor change its schema or dead-letter settings ("
                        + String.join(", ", needRestart) + "): restart settle, or make the change in two edits");
            }
        }
        return Optional.empty();
    }

    /**
     * Drains and stops a subscription's driver (which flushes its acks) and takes it out of the running ones; with
     * {@code codeToo}, closes its code and outputs too.
     */
    private RunningSubscription stopSubscription(String name, boolean codeToo) {
        RunningSubscription subscription = running.remove(name);
        health.unwatch(name);
        metrics.unwatchReceiverQueue(name);
        subscription.stop(grace);
        if (codeToo) {
            subscription.closeCode();
            subscription.closeOutputs();
            log.info("subscription '{}': stopped by a manifest reload", name);
        }
        return subscription;
    }

    /** Opens a subscription's handler (or function) from a reloaded deployment and starts its driver. */
    private void startSubscription(Deployment next, SubscriptionSpec spec) throws HandlerLoadException {
        if (next.function(spec.name()).isEmpty()) {
            openHandler(
                    next,
                    spec,
                    new PulsarOutputs(() -> client, "subscription '" + spec.name() + "'", spec.concurrency()));
        } else {
            running.put(spec.name(), initialiseFunction(next, spec));
        }
        startDriver(running.get(spec.name()));
        log.info("subscription '{}': started by a manifest reload", spec.name());
    }

    /** Swaps the new manifest's handler in with the consumer kept open. */
    private void swapSubscription(Deployment next, SubscriptionSpec spec, String sha256)
            throws HandlerLoadException, SwapRefusedException, IOException {
        LoadedHandler handler = next.handler(spec.name());
        RunningSubscription subscription = running.get(spec.name());
        HandlerContext context = SubscriptionContext.of(spec, subscription.outputs(), handler.classLoader());
        Runnable release = () -> next.release(spec.name());
        if (live != null) {
            live.reloaded(spec, context, handler, sha256, release);
            return;
        }
        CurrentGeneration code = subscription.code().orElseThrow();
        List<String> misfit = code.misfit(handler, spec);
        if (!misfit.isEmpty()) {
            next.release(spec.name());
            throw new IllegalArgumentException(String.join("; ", misfit)
                    + "; a new message type needs a new consumer: change a consumer setting too, or restart; the"
                    + " running handler goes on");
        }
        handler.open(context);
        double waited = code.reload(handler, spec, release, grace, time.instant());
        log.info(
                "subscription '{}': handler {} swapped in by a manifest reload (handler calls waited {} ms)",
                spec.name(),
                handler,
                waited);
    }

    /** Settle's version, from its JAR's manifest; {@code unknown} when run from classes (tests, an IDE). */
    public static String version() {
        String version = Settle.class.getPackage().getImplementationVersion();
        return version == null ? "unknown" : version;
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
        long started = System.nanoTime();
        long deadline = started + grace.toNanos();
        // Readiness goes first, so Kubernetes stops routing to us before anything is closed.
        health.markStopping();
        if (admin != null) {
            // No swap may begin while the drivers stop.
            admin.close();
        }
        List<RunningSubscription> all = new ArrayList<>(running.values());
        // Drivers stop side by side: the grace is the whole runtime's, not each subscription's in turn.
        List<Thread> stopping = new ArrayList<>();
        for (RunningSubscription subscription : all) {
            Thread thread = new Thread(() -> subscription.stop(grace), "settle-stop-" + subscription.name());
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
        closeCode(all, deadline);
        for (Deployment reloaded : reloads.deployments) {
            reloaded.close();
        }
        all.forEach(RunningSubscription::closeOutputs);
        if (live != null) {
            live.close();
        }
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
        long done = System.nanoTime();
        log.info(
                "stopped {} subscriptions in {} ms (drain {} ms, the rest {} ms)",
                all.size(),
                (done - started) / 1_000_000,
                (drained - started) / 1_000_000,
                (done - drained) / 1_000_000);
    }

    /**
     * Closes the subscriptions' code (handlers, functions) side by side on daemon threads, waiting no longer than
     * {@code deadline} (or a second, when the drain used up the grace): code whose {@code close()} never returns
     * cannot keep the process from stopping.
     */
    private void closeCode(List<RunningSubscription> all, long deadline) {
        List<Thread> closing = new ArrayList<>();
        for (RunningSubscription subscription : all) {
            Thread thread = new Thread(subscription::closeCode, "settle-close-" + subscription.name());
            thread.setDaemon(true);
            thread.start();
            closing.add(thread);
        }
        long until = Math.max(deadline, System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
        for (int i = 0; i < closing.size(); i++) {
            try {
                closing.get(i).join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (closing.get(i).isAlive()) {
                log.error(
                        "{} did not return from close() within the {} grace; stopping without it",
                        all.get(i).codeName(),
                        DurationText.format(grace));
            }
        }
    }
}
