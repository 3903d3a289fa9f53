package dev.settle.runtime.live;

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
import java.util.function.Function;

/**
 * Every subscription's live code: what runs first after a start (docs/live-code.md, "Restarts"), uploads and
 * rollbacks swapped in with the consumer kept open, and the retired class loaders watched. Made by the runtime
 * when the manifest has {@code admin:}; the admin API is its one caller afterwards.
 *
 * <p>Thread-safe; deploys of one subscription run one at a time.
 */
public final class LiveCode implements AutoCloseable {
    private final Map<String, LiveSubscription> subscriptions;
    private final Map<String, GenerationStore> stores;
    private final RetiredLoaders loaders;

    private LiveCode(
            Map<String, LiveSubscription> subscriptions, Map<String, GenerationStore> stores, RetiredLoaders loaders) {
        this.subscriptions = subscriptions;
        this.stores = stores;
        this.loaders = loaders;
    }

    /**
     * Reads each subscription's kept generations from the data folder and decides what runs first; an upload to
     * restore is loaded and opened here, the manifest's handler is left for the caller to open.
     *
     * @param contexts what each handler is told at {@code open}
     * @param grace how long a swap waits for the old generation's calls
     * @param time the wall clock generations are dated by
     * @throws IOException when the data folder cannot be read or written
     */
    public static LiveCode restore(
            Deployment deployment,
            AdminSettings admin,
            Function<SubscriptionSpec, HandlerContext> contexts,
            PrometheusRegistry registry,
            Duration grace,
            Time time)
            throws IOException {
        RetiredLoaders loaders = new RetiredLoaders(admin.retiredLoaderCheck(), time);
        LiveMetrics metrics = new LiveMetrics(registry, loaders::alive);
        Map<String, LiveSubscription> subscriptions = new LinkedHashMap<>();
        Map<String, GenerationStore> stores = new LinkedHashMap<>();
        try {
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                if (spec.handler().function()) {
                    // Uploads carry SDK handlers; a Pulsar Function's code changes with its manifest.
                    continue;
                }
                GenerationStore store = new GenerationStore(admin.dataDir(), spec.name());
                stores.put(spec.name(), store);
                subscriptions.put(
                        spec.name(),
                        LiveSubscription.restore(
                                spec,
                                contexts.apply(spec),
                                deployment.handler(spec.name()),
                                store,
                                grace,
                                metrics,
                                loaders,
                                time,
                                () -> deployment.release(spec.name())));
            }
        } catch (IOException e) {
            new LiveCode(subscriptions, stores, loaders).closeRestored();
            throw new IOException(
                    "admin.dataDir " + admin.dataDir() + " cannot be used (" + e
                            + "); make it a folder this process can write, or change admin.dataDir",
                    e);
        } catch (RuntimeException e) {
            new LiveCode(subscriptions, stores, loaders).closeRestored();
            throw e;
        }
        return new LiveCode(subscriptions, stores, loaders);
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
        return subscription(subscription).deploy(staged, sha256);
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

    /** Swaps back to the kept generation below the running one. */
    public Deployed rollback(String subscription) throws SwapRefusedException, IOException {
        return subscription(subscription).rollback();
    }

    public List<SubscriptionStatus> status() {
        return subscriptions.values().stream().map(LiveSubscription::status).toList();
    }

    public Optional<SubscriptionStatus> status(String subscription) {
        return Optional.ofNullable(subscriptions.get(subscription)).map(LiveSubscription::status);
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
