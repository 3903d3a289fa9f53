package dev.settle.runtime;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.live.CurrentGeneration;
import dev.settle.runtime.live.JarDigest;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.live.ManifestChange;
import dev.settle.runtime.live.SwapRefusedException;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.HandlerContext;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Manifest reloads of a running {@link Settle} (docs/live-code.md, "Manifest reload"): the manifest it runs, the
 * sha256 of each JAR as it was loaded, the deployments reloads made, the counter
 * {@code settle_manifest_reloads_total{result}}, and what a reload does to each subscription.
 *
 * <p>A reload runs under the {@link Settle}'s monitor, which guards this object's state and the running
 * subscriptions; the code of the subscriptions it removes is closed after it lets go of the monitor.
 */
final class Reloads {
    private static final Logger log = LoggerFactory.getLogger(Settle.class);

    /** The deployments reloads made: each owns the class loaders of the handlers it started; closed at the end. */
    final List<Deployment> deployments = new CopyOnWriteArrayList<>();

    private final Settle settle;
    private final Counter reloads;
    private final Duration grace;
    private final Time time;
    private Manifest manifest;
    private Map<String, String> sha256 = Map.of();

    Reloads(Settle settle, PrometheusRegistry registry, Duration grace, Time time) {
        this.settle = settle;
        this.grace = grace;
        this.time = time;
        reloads = Counter.builder()
                .name("settle_manifest_reloads")
                .help("Manifest reloads (the file changed, or SIGHUP), by result: applied, unchanged, refused.")
                .labelNames("result")
                .withoutExemplars()
                .register(registry);
        for (String result : List.of("applied", "unchanged", "refused")) {
            reloads.labelValues(result);
        }
    }

    void started(Deployment deployment) {
        manifest = deployment.manifest();
        sha256 = digests(manifest);
    }

    /** See {@link Settle#reload}. */
    Settle.ReloadResult reload(Path file, Map<String, String> environment) {
        List<RunningSubscription> removed = new ArrayList<>();
        Settle.ReloadResult result;
        synchronized (settle) {
            result = apply(file, environment, removed);
        }
        if (!removed.isEmpty()) {
            // Outside the monitor: a handler's close() that hangs holds up neither a stop nor the next reload.
            Stopping.closeCode(removed, time.nanoTime() + grace.toNanos(), grace, time);
            removed.forEach(RunningSubscription::closeOutputs);
            removed.forEach(
                    subscription -> log.info("subscription '{}': stopped by a manifest reload", subscription.name()));
        }
        return result;
    }

    private Settle.ReloadResult apply(Path file, Map<String, String> environment, List<RunningSubscription> removed) {
        if (settle.isClosed()) {
            return Settle.ReloadResult.REFUSED;
        }
        long started = time.nanoTime();
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
        Map<String, String> nextSha256 = digests(next.manifest());
        ManifestChange change = ManifestChange.between(manifest, sha256, next.manifest(), nextSha256);
        Optional<String> refusal = refusal(change, next.manifest());
        if (refusal.isPresent()) {
            log.error("manifest {} not reloaded: {}; the running subscriptions are untouched", file, refusal.get());
            next.close();
            return refuse();
        }
        if (change.isEmpty()) {
            log.info("manifest {} reloaded: nothing changed", file);
            next.close();
            count("unchanged");
            return Settle.ReloadResult.UNCHANGED;
        }
        Map<String, SubscriptionSpec> specs = new LinkedHashMap<>();
        next.subscriptions().forEach(spec -> specs.put(spec.name(), spec));
        for (Map.Entry<String, ManifestChange.Kind> entry :
                change.subscriptions().entrySet()) {
            String name = entry.getKey();
            try {
                applyTo(name, entry.getValue(), next, specs.get(name), nextSha256.get(name), removed);
            } catch (HandlerLoadException | SwapRefusedException | IOException | RuntimeException e) {
                log.error(
                        "subscription '{}': the reload could not {} it: {}",
                        name,
                        entry.getValue().name().toLowerCase(Locale.ROOT),
                        e.getMessage());
            }
        }
        deployments.add(next);
        manifest = next.manifest();
        sha256 = nextSha256;
        count("applied");
        log.info("manifest {} reloaded in {} ms: {}", file, (time.nanoTime() - started) / 1_000_000, change);
        return Settle.ReloadResult.APPLIED;
    }

    private void applyTo(
            String name,
            ManifestChange.Kind kind,
            Deployment next,
            SubscriptionSpec spec,
            String jarSha256,
            List<RunningSubscription> removed)
            throws HandlerLoadException, SwapRefusedException, IOException {
        LiveCode live = settle.live().orElse(null);
        switch (kind) {
            case UNCHANGED -> {
                if (next.function(name).isEmpty()) {
                    // Loaded by the new deployment and never to run: its loader closes unless in use.
                    next.release(name);
                }
            }
            case REMOVED -> removed.add(settle.stopSubscription(name));
            case ADDED -> start(next, spec);
            case SWAP -> swap(next, spec, jarSha256, live);
            case RESTART -> {
                RunningSubscription stopped = settle.stopSubscription(name);
                if (live == null) {
                    stopped.closeCode();
                    stopped.closeOutputs();
                    log.info("subscription '{}': stopped by a manifest reload", name);
                    start(next, spec);
                } else {
                    // With the admin API, the running generation (an upload, perhaps) goes on running.
                    next.release(name);
                    settle.startSubscription(stopped.withSpec(spec));
                }
            }
        }
    }

    private void start(Deployment next, SubscriptionSpec spec) throws HandlerLoadException {
        settle.startSubscription(settle.opener().open(next, spec));
        log.info("subscription '{}': started by a manifest reload", spec.name());
    }

    /** Swaps the new manifest's handler in with the consumer kept open. */
    private void swap(Deployment next, SubscriptionSpec spec, String jarSha256, LiveCode live)
            throws HandlerLoadException, SwapRefusedException, IOException {
        LoadedHandler handler = next.handler(spec.name());
        RunningSubscription subscription = settle.running(spec.name());
        HandlerContext context = PortChain.context(spec, subscription.outputs(), handler.classLoader());
        Runnable release = () -> next.release(spec.name());
        if (live != null) {
            live.reloaded(spec, context, handler, jarSha256, release);
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

    private Settle.ReloadResult refuse() {
        count("refused");
        return Settle.ReloadResult.REFUSED;
    }

    private void count(String result) {
        reloads.labelValues(result).inc();
    }

    /** Why a valid manifest cannot be reloaded as a whole, if it cannot. */
    private Optional<String> refusal(ManifestChange change, Manifest next) {
        if (!change.sectionsChanged().isEmpty()) {
            return Optional.of(String.join(", ", change.sectionsChanged())
                    + " changed, which a reload does not apply: restart settle for that (a reload applies changes to"
                    + " subscriptions only)");
        }
        if (settle.live().isPresent()) {
            List<String> needRestart = new ArrayList<>(change.of(ManifestChange.Kind.ADDED));
            needRestart.addAll(change.of(ManifestChange.Kind.REMOVED));
            Map<String, SubscriptionSpec> before = new LinkedHashMap<>();
            manifest.subscriptions().forEach(spec -> before.put(spec.name(), spec));
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

    /** Each subscription's JAR sha256 now; a JAR that cannot be read gets a value no JAR has, so it differs. */
    static Map<String, String> digests(Manifest manifest) {
        Map<String, String> digests = new LinkedHashMap<>();
        for (SubscriptionSpec spec : manifest.subscriptions()) {
            try {
                digests.put(spec.name(), JarDigest.of(spec.handler().jar()));
            } catch (IOException e) {
                digests.put(spec.name(), "unreadable: " + e);
            }
        }
        return digests;
    }
}
