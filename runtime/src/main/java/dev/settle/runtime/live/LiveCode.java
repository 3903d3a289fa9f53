package dev.settle.runtime.live;

import dev.settle.runtime.canary.Thresholds;
import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.HandlerContext;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every subscription's live code: what runs first after a start (docs/live-code.md, "Restarts"), uploads and
 * rollbacks swapped in with the consumer kept open, and the retired class loaders watched. Made by the runtime
 * when the manifest has {@code admin:}; the admin API is its one caller afterwards.
 *
 * <p>Thread-safe; deploys of one subscription run one at a time.
 */
public final class LiveCode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LiveCode.class);

    private final Map<String, LiveSubscription> subscriptions;
    /** The Pulsar Functions of the manifest, each with why a canary of it is refused. */
    private final Map<String, String> functions = new LinkedHashMap<>();

    private final Map<String, CodeStore> stores;
    private final RetiredLoaders loaders;
    /** With {@code admin.codeStore: pulsar}: the records every runtime reads; null with the disk store. */
    private final FleetRecords fleet;

    private final Time clock;
    /** Follows the fleet's records one at a time, off the client's threads (a swap waits for handler calls). */
    private final ExecutorService follower;

    private LiveCode(
            Map<String, LiveSubscription> subscriptions,
            Map<String, CodeStore> stores,
            RetiredLoaders loaders,
            FleetRecords fleet,
            Time clock) {
        this.subscriptions = subscriptions;
        this.stores = stores;
        this.loaders = loaders;
        this.fleet = fleet;
        this.clock = clock;
        this.follower = fleet == null
                ? null
                : Executors.newSingleThreadExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "settle-code-follower");
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /**
     * Reads each subscription's kept generations from the data folder and decides what runs first; an upload to
     * restore is loaded and opened here, the manifest's handler is left for the caller to open.
     *
     * @param contexts what each handler is told at {@code open}
     * @param grace how long a swap waits for the old generation's calls
     * @param time the wall clock generations are dated by
     * @param clients makes the client of the fleet's records when the code is kept in Pulsar
     * @throws IOException when the data folder cannot be read or written
     */
    public static LiveCode restore(
            Deployment deployment,
            AdminSettings admin,
            Function<SubscriptionSpec, HandlerContext> contexts,
            PrometheusRegistry registry,
            Duration grace,
            Time time,
            FleetRecords.Clients clients)
            throws IOException {
        RetiredLoaders loaders = new RetiredLoaders(admin.retiredLoaderCheck(), time);
        LiveMetrics metrics = new LiveMetrics(registry, loaders::alive);
        Map<String, LiveSubscription> subscriptions = new LinkedHashMap<>();
        Map<String, CodeStore> stores = new LinkedHashMap<>();
        Map<String, String> functionRefusals = new LinkedHashMap<>();
        String instance = instanceName();
        LiveParts parts = new LiveParts(grace, metrics, loaders, time, instance);
        FleetRecords fleet = admin.codeStore() == AdminSettings.CodeStore.PULSAR
                ? FleetRecords.open(
                        clients,
                        deployment.manifest().pulsar(),
                        admin.codeNamespace().orElseThrow(),
                        instance)
                : null;
        try {
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (spec.handler().function()) {
                    // Uploads carry SDK handlers; a Pulsar Function's code changes with its manifest.
                    functionRefusals.put(spec.name(), canaryRefusal(spec));
                    continue;
                }
                CodeStore store = fleet == null
                        ? new GenerationStore(admin.dataDir(), spec.name())
                        : new PulsarCodeStore(
                                fleet,
                                deployment.manifest().pulsar(),
                                admin.codeNamespace().orElseThrow(),
                                spec.name(),
                                admin.dataDir().resolve("uploads"),
                                time);
                stores.put(spec.name(), store);
                subscriptions.put(
                        spec.name(),
                        FirstGeneration.restore(
                                spec,
                                contexts.apply(spec),
                                deployment.handler(spec.name()),
                                store,
                                () -> deployment.release(spec.name()),
                                parts));
            }
        } catch (IOException e) {
            new LiveCode(subscriptions, stores, loaders, fleet, time).closeRestored();
            throw new IOException(
                    fleet == null
                            ? "admin.dataDir " + admin.dataDir() + " cannot be used (" + e
                                    + "); make it a folder this process can write, or change admin.dataDir"
                            : "the generations in Pulsar cannot be read or written (" + e + ")",
                    e);
        } catch (RuntimeException e) {
            new LiveCode(subscriptions, stores, loaders, fleet, time).closeRestored();
            throw e;
        }
        LiveCode live = new LiveCode(subscriptions, stores, loaders, fleet, time);
        live.functions.putAll(functionRefusals);
        return live;
    }

    /** Why a canary of the Pulsar Function {@code spec} is refused: a window, its state, or no generations at all. */
    static String canaryRefusal(SubscriptionSpec spec) {
        String name = "subscription '" + spec.name() + "' is a Pulsar Function";
        if (spec.function().window().isPresent()) {
            return name + " with windowConfig: a window spans keys, so no slice of keys can run other code; change"
                    + " its jar: in the manifest instead (a reload swaps it)";
        }
        if (spec.function().state().isPresent()) {
            return name + " with state (" + spec.function().state().get() + "): two generations would write the"
                    + " same keys' state; change its jar: in the manifest instead (a reload swaps it)";
        }
        return name + ": a function keeps no generations (its code is the manifest's), so it has no canary; change"
                + " its jar: in the manifest instead (a reload swaps it)";
    }

    /**
     * {@code <pod>:<pid>}: the pod's name on Kubernetes, else the host's, as dead letters and the journal name it
     * ({@link DeadLetterProperties#instance()}), and this process's id, so that several runtimes on one host (a laptop,
     * a test) have names of their own; a restarted container keeps its name when its process id is the same (1, in
     * most images), and replaces its own report.
     */
    private static String instanceName() {
        return DeadLetterProperties.instance() + ":" + ProcessHandle.current().pid();
    }

    /**
     * With the Pulsar store: reports what each subscription runs, then follows every new record (docs/live-code.md,
     * "One way for one pod and for many"). Called once the drivers run; nothing to do with the disk store.
     */
    public void follow() {
        if (fleet == null) {
            return;
        }
        for (LiveSubscription subscription : subscriptions.values()) {
            report(subscription);
        }
        fleet.listen((name, desired) -> {
            LiveSubscription subscription = subscriptions.get(name);
            if (subscription != null) {
                follower.execute(() -> {
                    try {
                        // The latest record when this runs: a burst of records is one swap, to the last. A latest
                        // one that is malformed was refused (and logged) as it came: this one stands.
                        FleetRecords.Desired latest = fleet.latestReadable(name).orElse(desired);
                        subscription.follow(latest.state());
                        report(subscription);
                    } catch (RuntimeException e) {
                        log.error("subscription '{}': following the generation record failed", name, e);
                    }
                });
            }
        });
    }

    /**
     * Stops following the records (a swap under way finishes, up to {@code grace}): before the drivers stop, as the
     * admin API stops taking uploads.
     */
    public void stopFollowing(Duration grace) {
        if (follower == null) {
            return;
        }
        follower.shutdown();
        try {
            follower.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void report(LiveSubscription subscription) {
        SubscriptionStatus status = subscription.status();
        fleet.report(
                status.subscription(),
                status.active().number(),
                status.active().sha256(),
                subscription.problem(),
                clock.instant());
    }

    /** Whether an upload restored from the data folder runs first, so the manifest's handler is not to be opened. */
    public boolean runsUpload(String subscription) {
        return subscription(subscription).runsUpload();
    }

    /**
     * The running generation of a subscription; its manifest handler is open by now behind {@code manifestPort}
     * unless {@link #runsUpload} (then both are null).
     */
    public CurrentGeneration code(String subscription, LoadedHandler manifestHandler, HandlerPort manifestPort) {
        return subscription(subscription).port(manifestHandler, manifestPort);
    }

    /** A new file in the subscription's data folder to stream an upload into. */
    public Path stagingFile(String subscription) throws IOException {
        subscription(subscription);
        return stores.get(subscription).stagingFile();
    }

    /**
     * Checks the JAR at {@code staged} (its sha256 computed while it was received) and swaps it in.
     *
     * @throws NoSuchElementException when there is no such subscription
     * @throws SwapRefusedException with every problem, the running code untouched
     */
    public Deployed deploy(String subscription, Path staged, String sha256) throws SwapRefusedException, IOException {
        Deployed deployed = subscription(subscription).deploy(staged, sha256);
        if (fleet != null) {
            report(subscription(subscription));
        }
        return deployed;
    }

    /**
     * Swaps in the handler of a reloaded manifest whose code for this subscription changed, as its next generation
     * (docs/live-code.md, "Manifest reload").
     *
     * @param handler loaded by the new manifest's deployment, not opened
     * @param release hands the handler's class loader back to that deployment once it is swapped out
     * @throws SwapRefusedException when it does not fit the open consumer or its {@code open()} fails
     */
    public Deployed reloaded(
            SubscriptionSpec spec, HandlerContext context, LoadedHandler handler, String jarSha256, Runnable release)
            throws SwapRefusedException, IOException {
        return subscription(spec.name()).reloaded(spec, context, handler, jarSha256, release);
    }

    /**
     * Says in the subscription's status why the last manifest reload could not change it (it runs on as it was), or,
     * with an empty {@code problem}, that it could; a subscription without live code (a function) is not shown.
     */
    public void reloadProblem(String subscription, Optional<String> problem) {
        LiveSubscription live = subscriptions.get(subscription);
        if (live != null) {
            live.reloadProblem(problem.orElse(null));
        }
    }

    /**
     * Checks the JAR at {@code staged} and starts a canary ramp of it (docs/live-code.md, "Canary ramps").
     *
     * @throws NoSuchElementException when there is no such subscription
     * @throws SwapRefusedException with every problem (a function, a ramp already running, the JAR), nothing changed
     */
    public Deployed canary(
            String subscription, Path staged, String sha256, List<Integer> steps, Duration every, Thresholds limits)
            throws SwapRefusedException, IOException {
        refuseFunction(subscription, staged);
        Deployed deployed = subscription(subscription).canary(staged, sha256, steps, every, limits);
        if (fleet != null) {
            report(subscription(subscription));
        }
        return deployed;
    }

    /** What a command does to a subscription's running ramp. */
    public enum RampCommand {
        PROMOTE,
        ABORT,
        STEP
    }

    /**
     * Promotes, aborts or steps the subscription's running ramp.
     *
     * @throws SwapRefusedException (conflict) when none runs
     */
    public Deployed ramp(String subscription, RampCommand command) throws SwapRefusedException, IOException {
        refuseFunction(subscription, null);
        LiveSubscription live = subscription(subscription);
        Deployed done = switch (command) {
            case PROMOTE -> live.promote();
            case ABORT -> live.abort();
            case STEP -> live.step();
        };
        if (fleet != null) {
            report(live);
        }
        return done;
    }

    /** The subscription's ramp (running, or the last one ended) with both generations' counts; empty for none. */
    public Optional<RampStatus> rampStatus(String subscription) {
        return Optional.ofNullable(subscriptions.get(subscription)).flatMap(LiveSubscription::rampStatus);
    }

    /** Why a canary of {@code subscription} is refused before its JAR is read (it is a Pulsar Function); empty if not. */
    public Optional<String> canaryRefusal(String subscription) {
        return Optional.ofNullable(functions.get(subscription));
    }

    /** A Pulsar Function keeps no generations: a canary of one is refused, naming why. */
    private void refuseFunction(String subscription, Path staged) throws SwapRefusedException, IOException {
        String why = functions.get(subscription);
        if (why == null) {
            return;
        }
        if (staged != null) {
            java.nio.file.Files.deleteIfExists(staged);
        }
        throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, List.of(why));
    }

    /** Swaps back to the kept generation below the running one. */
    public Deployed rollback(String subscription) throws SwapRefusedException, IOException {
        Deployed deployed = subscription(subscription).rollback();
        if (fleet != null) {
            report(subscription(subscription));
        }
        return deployed;
    }

    public List<SubscriptionStatus> status() {
        return subscriptions.values().stream().map(this::status).toList();
    }

    public Optional<SubscriptionStatus> status(String subscription) {
        return Optional.ofNullable(subscriptions.get(subscription)).map(this::status);
    }

    private SubscriptionStatus status(LiveSubscription subscription) {
        SubscriptionStatus status = subscription.status();
        return fleet == null ? status : status.withFleet(fleet.reports(status.subscription()));
    }

    /** The handlers running now, for the runtime to close when it stops. */
    public List<LoadedHandler> runningHandlers() {
        return subscriptions.values().stream()
                .map(LiveSubscription::runningHandler)
                .filter(java.util.Objects::nonNull)
                .toList();
    }

    /** Handler class loaders not yet collected (the gauge {@code settle_handler_classloaders_live}). */
    public int classLoadersAlive() {
        return loaders.alive();
    }

    /** Closes the running generations' own class loaders (their handlers are closed by then) and the watch. */
    @Override
    public void close() {
        if (fleet != null) {
            follower.shutdownNow();
            fleet.leave(List.copyOf(subscriptions.keySet()));
            fleet.close();
        }
        for (LiveSubscription subscription : subscriptions.values()) {
            subscription.closeLoader();
        }
        loaders.close();
    }

    private void closeRestored() {
        for (LiveSubscription subscription : subscriptions.values()) {
            LoadedHandler handler = subscription.runningHandler();
            if (handler != null) {
                handler.close();
            }
        }
        close();
    }

    private LiveSubscription subscription(String name) {
        LiveSubscription subscription = subscriptions.get(name);
        if (subscription == null) {
            throw new NoSuchElementException(
                    "no subscription '" + name + "'; the manifest has " + String.join(", ", subscriptions.keySet()));
        }
        return subscription;
    }
}
