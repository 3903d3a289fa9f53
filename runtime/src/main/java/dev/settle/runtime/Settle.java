package dev.settle.runtime;

import dev.settle.runtime.admin.AdminServer;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.function.FunctionPort;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.live.CurrentGeneration;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.live.ManifestChange;
import dev.settle.runtime.live.ReloadableHandler;
import dev.settle.runtime.live.SwapRefusedException;
import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.ManifestException;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
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
    private final List<LoadedHandler> opened;
    private final PulsarClient client;
    private final SystemTime time;
    private final List<SubscriptionDriver> drivers;
    /** The handlers' outputs, per subscription, for a reload to close those of a subscription it stops. */
    private final Map<String, PulsarOutputs> outputsOf = new java.util.concurrent.ConcurrentHashMap<>();

    private final Duration grace;
    private final CompletableFuture<FatalError> fatal = new CompletableFuture<>();
    /** With {@code admin:} in the manifest: the live code and the admin API; null otherwise. */
    private LiveCode live;

    private AdminServer admin;
    /** The Pulsar Functions' ports and their outputs, in the order they are to be closed. */
    private final List<AutoCloseable> functionParts = new CopyOnWriteArrayList<>();

    private volatile boolean closed;

    /** Manifest reloads: the running manifest, its JARs' sha256, and each subscription's parts (docs/live-code.md). */
    private final Reloads reloads;

    /** A subscription whose handler hit an error the process cannot be trusted to survive, such as out of memory. */
    public record FatalError(String subscription, Throwable error) {}

    private Settle(
            Deployment deployment,
            SettleMetrics metrics,
            HealthEndpoint health,
            List<LoadedHandler> opened,
            PulsarClient client,
            SystemTime time,
            List<SubscriptionDriver> drivers,
            Duration grace) {
        this.deployment = deployment;
        this.metrics = metrics;
        this.health = health;
        this.opened = opened;
        this.client = client;
        this.time = time;
        this.drivers = drivers;
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
        List<LoadedHandler> opened = new ArrayList<>();
        List<PulsarOutputs> handlerOutputs = new ArrayList<>();
        CompletableFuture<PulsarClient> connecting = new CompletableFuture<>();
        PulsarClient client = null;
        SystemTime time = new SystemTime();
        List<SubscriptionDriver> drivers = new CopyOnWriteArrayList<>();
        Settle settle = null;
        Optional<AdminSettings> adminSettings = deployment.manifest().admin();
        LiveCode live = null;
        try {
            // Publishers ask for the client at their first message, once it exists.
            Map<String, PulsarOutputs> outputsOf = new LinkedHashMap<>();
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (!spec.handler().function()) {
                    PulsarOutputs outputs = new PulsarOutputs(
                            () -> connecting.getNow(null), "subscription '" + spec.name() + "'", spec.concurrency());
                    outputsOf.put(spec.name(), outputs);
                    handlerOutputs.add(outputs);
                }
            }
            if (adminSettings.isPresent()) {
                // Before the handlers open: a restored upload runs instead of the manifest's handler. An upload's
                // publishers build their schemas in the loader of the type they publish.
                live = LiveCode.restore(
                        deployment,
                        adminSettings.get(),
                        spec -> SubscriptionContext.of(spec, outputsOf.get(spec.name()), null),
                        metrics.registry(),
                        grace);
            }
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (spec.handler().function()) {
                    // Initialised once the client exists: initialize may publish.
                    continue;
                }
                if (live != null && live.runsUpload(spec.name())) {
                    continue;
                }
                LoadedHandler handler = deployment.handler(spec.name());
                handler.open(SubscriptionContext.of(spec, outputsOf.get(spec.name()), handler.classLoader()));
                opened.add(handler);
                log.info(
                        "subscription '{}': handler {} {} loaded from {} (message type {})",
                        spec.name(),
                        handler.className(),
                        handler.version().orElse("(no version)"),
                        handler.jar(),
                        handler.messageType().getName());
            }
            client = PulsarClients.create(deployment.manifest().pulsar());
            connecting.complete(client);
            settle = new Settle(deployment, metrics, health, opened, client, time, drivers, grace);
            settle.live = live;
            settle.functionParts.addAll(handlerOutputs);
            settle.outputsOf.putAll(outputsOf);
            PulsarClient connected = client;
            settle.reloads.started(deployment);
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                settle.startDriver(spec, portOf(deployment, spec, settle, connected, metrics, live));
            }
            if (live != null) {
                settle.admin = AdminServer.start(adminSettings.get(), live);
            }
            health.markStarted();
            return settle;
        } catch (HandlerLoadException | IOException | RuntimeException e) {
            if (settle == null) {
                settle = new Settle(deployment, metrics, health, opened, client, time, drivers, Duration.ZERO);
                settle.live = live;
            }
            settle.close();
            throw e;
        }
    }

    /**
     * Starts a subscription's driver on its port (a handler's running generation, or a function's port) and has it
     * watched; at start and by a reload.
     */
    private void startDriver(SubscriptionSpec spec, Object portOrCode) {
        Function<HandlerPort, SubscriptionDriver> start =
                port -> SubscriptionDriver.start(client, spec, port, time, metrics.forSubscription(spec.name()));
        SubscriptionDriver driver = portOrCode instanceof CurrentGeneration code
                ? code.start(start)
                : start.apply((HandlerPort) portOrCode);
        drivers.add(driver);
        driver.fatalError().thenAccept(error -> fatal.complete(new FatalError(spec.name(), error)));
        metrics.watchReceiverQueue(spec.name(), driver::messagesInReceiverQueue);
        metrics.watchConnection(spec.name(), driver::isConnected);
        health.watch(SubscriptionProbe.of(driver));
    }

    /**
     * The running generation of a subscription's handler, or the port of its Pulsar Function (initialised here), with
     * its outputs.
     */
    private static Object portOf(
            Deployment deployment,
            SubscriptionSpec spec,
            Settle settle,
            PulsarClient client,
            SettleMetrics metrics,
            LiveCode live)
            throws HandlerLoadException {
        Optional<LoadedFunction> function = deployment.function(spec.name());
        if (function.isEmpty()) {
            LoadedHandler handler = deployment.handler(spec.name());
            if (live != null) {
                return live.code(spec.name(), handler);
            }
            ReloadableHandler reloadable = ReloadableHandler.of(handler, spec, () -> deployment.release(spec.name()));
            settle.reloads.reloadable.put(spec.name(), reloadable);
            return reloadable.code();
        }
        PulsarOutputs outputs =
                new PulsarOutputs(() -> client, "subscription '" + spec.name() + "'", spec.concurrency());
        FunctionPort port = new FunctionPort(
                function.get(),
                spec,
                outputs,
                (name, value) -> metrics.functionMetric(spec.name(), name, value),
                System::getenv);
        settle.functionParts.add(port::close);
        settle.functionParts.add(outputs);
        settle.reloads.partsOf.put(spec.name(), List.of(port::close, outputs));
        port.open();
        log.info(
                "subscription '{}': function {} {} loaded from {} ({} to {}{})",
                spec.name(),
                function.get().className(),
                function.get().version().orElse("(no version)"),
                function.get().jar(),
                function.get().inputType().getName(),
                function.get().outputType().getName(),
                spec.function().output().map(topic -> ", published to " + topic).orElse(", no output"));
        return port;
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
                        stopSubscription(name, live == null);
                        if (live == null) {
                            startSubscription(next, spec);
                        } else {
                            // With the admin API, the running generation (an upload, perhaps) goes on running.
                            next.release(name);
                            startDriver(spec, live.code(name));
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

    /** Drains and stops a subscription's driver (which flushes its acks); with {@code handlerToo}, its handler. */
    private void stopSubscription(String name, boolean handlerToo) {
        SubscriptionDriver driver = drivers.stream()
                .filter(running -> running.subscription().equals(name))
                .findFirst()
                .orElseThrow();
        health.unwatch(name);
        metrics.unwatchReceiverQueue(name);
        driver.stop(grace);
        drivers.remove(driver);
        if (!handlerToo) {
            return;
        }
        ReloadableHandler reloadable = reloads.reloadable.remove(name);
        if (reloadable != null) {
            opened.remove(reloadable.running());
            reloadable.close();
        }
        List<AutoCloseable> parts = new ArrayList<>(reloads.partsOf.getOrDefault(name, List.of()));
        PulsarOutputs outputs = outputsOf.remove(name);
        if (outputs != null) {
            parts.add(outputs);
        }
        for (AutoCloseable part : parts) {
            functionParts.remove(part);
            try {
                part.close();
            } catch (Exception | LinkageError e) {
                log.warn("subscription '{}': closing {} failed; the reload goes on", name, part, e);
            }
        }
        reloads.partsOf.remove(name);
        log.info("subscription '{}': stopped by a manifest reload", name);
    }

    /** Opens a subscription's handler from a reloaded deployment and starts its driver. */
    private void startSubscription(Deployment next, SubscriptionSpec spec) throws HandlerLoadException {
        if (next.function(spec.name()).isEmpty()) {
            PulsarOutputs outputs =
                    new PulsarOutputs(() -> client, "subscription '" + spec.name() + "'", spec.concurrency());
            LoadedHandler handler = next.handler(spec.name());
            try {
                handler.open(SubscriptionContext.of(spec, outputs, handler.classLoader()));
            } catch (HandlerLoadException | RuntimeException e) {
                outputs.close();
                throw e;
            }
            outputsOf.put(spec.name(), outputs);
            functionParts.add(outputs);
            opened.add(handler);
        }
        startDriver(spec, portOf(next, spec, this, client, metrics, null));
        log.info("subscription '{}': started by a manifest reload", spec.name());
    }

    /** Swaps the new manifest's handler in with the consumer kept open. */
    private void swapSubscription(Deployment next, SubscriptionSpec spec, String sha256)
            throws HandlerLoadException, SwapRefusedException, IOException {
        LoadedHandler handler = next.handler(spec.name());
        HandlerContext context = SubscriptionContext.of(spec, outputsOf.get(spec.name()), handler.classLoader());
        Runnable release = () -> next.release(spec.name());
        if (live != null) {
            live.reloaded(spec, context, handler, sha256, release);
            return;
        }
        ReloadableHandler reloadable = reloads.reloadable.get(spec.name());
        Optional<String> misfit = reloadable.misfit(handler, spec);
        if (misfit.isPresent()) {
            next.release(spec.name());
            throw new IllegalArgumentException(misfit.get()
                    + "; a new message type needs a new consumer: change a consumer setting too, or restart; the"
                    + " running handler goes on");
        }
        handler.open(context);
        opened.add(handler);
        double waited = reloadable.swap(handler, spec, release, grace);
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
        closed = true;
        long started = System.nanoTime();
        long deadline = started + grace.toNanos();
        // Readiness goes first, so Kubernetes stops routing to us before anything is closed.
        health.markStopping();
        if (admin != null) {
            // No swap may begin while the drivers stop.
            admin.close();
        }
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
        closeHandlers(deadline);
        for (Deployment reloaded : reloads.deployments) {
            reloaded.close();
        }
        for (AutoCloseable part : functionParts) {
            try {
                part.close();
            } catch (Exception | LinkageError e) {
                log.warn("closing {} failed; stopping goes on", part, e);
            }
        }
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
                drivers.size(),
                (done - started) / 1_000_000,
                (drained - started) / 1_000_000,
                (done - drained) / 1_000_000);
    }

    /**
     * Closes the handlers side by side on daemon threads, waiting no longer than {@code deadline} (or a second,
     * when the drain used up the grace): a handler whose {@code close()} never returns cannot keep the process
     * from stopping.
     */
    private void closeHandlers(long deadline) {
        List<LoadedHandler> toClose = new ArrayList<>(opened);
        if (live != null) {
            // The manifest's handler, if it still runs, is in both lists: closed once.
            live.runningHandlers().stream()
                    .filter(handler -> !toClose.contains(handler))
                    .forEach(toClose::add);
        }
        List<Thread> closing = new ArrayList<>();
        for (LoadedHandler handler : toClose) {
            Thread thread = new Thread(handler::close, "settle-close-" + handler.className());
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
                        "handler {} did not return from close() within the {} grace; stopping without it",
                        toClose.get(i),
                        DurationText.format(grace));
            }
        }
    }
}
