package dev.settle.runtime;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.live.JarDigest;
import dev.settle.runtime.live.ManifestChange;
import dev.settle.runtime.live.SwapRefusedException;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.runtime.time.Time;
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
 * Manifest reloads (docs/live-code.md, "Manifest reload"): the manifest that runs, the sha256 of each JAR as it was
 * loaded, the deployments reloads made, the counter {@code settle_manifest_reloads_total{result}}, and what a reload
 * does to each of the running {@link Subscriptions}.
 *
 * <p>A reload runs under the running subscriptions' monitor, which guards this object's state too; the code of the
 * subscriptions it removes is closed after it lets go of the monitor.
 */
final class Reloads {
    private static final Logger log = LoggerFactory.getLogger(Reloads.class);

    /**
     * The deployments reloads made whose code runs (or waits for a retry): each owns the class loaders of the handlers
     * it started; forgotten once all its code is released, the rest closed at the end.
     */
    private final List<Deployment> deployments = new CopyOnWriteArrayList<>();

    private final Subscriptions subscriptions;
    private final SubscriptionChanges changes;
    private final Counter reloads;
    private final Duration grace;
    private final Time time;
    private Manifest manifest;
    private Map<String, String> sha256 = Map.of();

    Reloads(
            Subscriptions subscriptions,
            HealthEndpoint health,
            PrometheusRegistry registry,
            Duration grace,
            Time time) {
        this.subscriptions = subscriptions;
        this.changes = new SubscriptionChanges(subscriptions, health, grace, time);
        this.grace = grace;
        this.time = time;
        reloads = Counter.builder()
                .name("settle_manifest_reloads")
                .help("Manifest reloads (the file changed, or SIGHUP), by result: applied, failed (some subscriptions"
                        + " could not change and run on as they were, or are retried), unchanged, refused.")
                .labelNames("result")
                .withoutExemplars()
                .register(registry);
        for (String result : List.of("applied", "failed", "unchanged", "refused")) {
            reloads.labelValues(result);
        }
    }

    /** The manifest running now: the last one applied. */
    Manifest manifest() {
        return manifest;
    }

    void started(Deployment deployment) {
        manifest = deployment.manifest();
        sha256 = digests(manifest);
    }

    /**
     * Reloads the manifest: checked exactly as at start; refused as a whole (every problem logged, nothing running
     * touched) when invalid or when a section other than {@code subscriptions} changed; otherwise each subscription is
     * added, drained and stopped, swapped with its consumer open, restarted, or left alone, as the new manifest says.
     */
    ReloadResult reload(Path file, Map<String, String> environment) {
        List<RunningSubscription> removed = new ArrayList<>();
        ReloadResult result;
        synchronized (subscriptions) {
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

    private ReloadResult apply(Path file, Map<String, String> environment, List<RunningSubscription> removed) {
        if (subscriptions.isClosed()) {
            return ReloadResult.REFUSED;
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
            return ReloadResult.UNCHANGED;
        }
        Map<String, SubscriptionSpec> specs = new LinkedHashMap<>();
        next.subscriptions().forEach(spec -> specs.put(spec.name(), spec));
        // Each subscription all or nothing: one that fails runs on as it was (or, added, is retried), the rest apply.
        Map<String, String> failed = new LinkedHashMap<>();
        for (Map.Entry<String, ManifestChange.Kind> entry :
                change.subscriptions().entrySet()) {
            String name = entry.getKey();
            try {
                changes.apply(name, entry.getValue(), next, specs.get(name), nextSha256.get(name), removed);
            } catch (HandlerLoadException | SwapRefusedException | IOException | RuntimeException e) {
                if (specs.containsKey(name)) {
                    // Its new code does not run: its loader goes now, not with the deployment (a retry loads it again).
                    next.release(name);
                }
                failed.put(name, e.getMessage() != null ? e.getMessage() : e.toString());
                log.error(
                        "subscription '{}': the reload could not {} it, so it {}: {}",
                        name,
                        entry.getValue().name().toLowerCase(Locale.ROOT),
                        changes.pending(name)
                                ? "is retried with backoff and unready until it starts"
                                : "runs on as it was",
                        failed.get(name));
            }
        }
        deployments.add(next);
        subscriptions
                .live()
                .ifPresent(live -> change.subscriptions()
                        .keySet()
                        .forEach(name -> live.reloadProblem(name, Optional.ofNullable(failed.get(name)))));
        running(next.manifest(), nextSha256, failed.keySet());
        forgetReleasedDeployments();
        if (failed.isEmpty()) {
            count("applied");
            log.info("manifest {} reloaded in {} ms: {}", file, (time.nanoTime() - started) / 1_000_000, change);
            return ReloadResult.APPLIED;
        }
        count("failed");
        log.error(
                "manifest {} reloaded in part in {} ms: {}; failed: {} (each runs on as it was, or is retried if it was"
                        + " added; the next reload tries the rest again)",
                file,
                (time.nanoTime() - started) / 1_000_000,
                change,
                String.join(", ", failed.keySet()));
        return ReloadResult.FAILED;
    }

    /**
     * Records what runs now, which the next reload is compared with: the new manifest's subscriptions, except those
     * whose change failed and which run on as they were (an added one waiting for its retry counts as the new
     * manifest's), so that reloading the same file again tries them again.
     */
    private void running(Manifest next, Map<String, String> nextSha256, java.util.Set<String> failed) {
        Map<String, SubscriptionSpec> before = new LinkedHashMap<>();
        manifest.subscriptions().forEach(spec -> before.put(spec.name(), spec));
        List<SubscriptionSpec> runs = new ArrayList<>();
        Map<String, String> runsSha256 = new LinkedHashMap<>();
        for (SubscriptionSpec spec : next.subscriptions()) {
            boolean asItWas =
                    failed.contains(spec.name()) && before.containsKey(spec.name()) && !changes.pending(spec.name());
            runs.add(asItWas ? before.get(spec.name()) : spec);
            runsSha256.put(spec.name(), asItWas ? sha256.get(spec.name()) : nextSha256.get(spec.name()));
        }
        for (String name : failed) {
            // A removal that failed: it still runs.
            if (!runsSha256.containsKey(name) && before.containsKey(name) && subscriptions.get(name) != null) {
                runs.add(before.get(name));
                runsSha256.put(name, sha256.get(name));
            }
        }
        manifest = new Manifest(
                next.file(),
                next.pulsar(),
                next.http(),
                next.startup(),
                next.shutdown(),
                next.tracing(),
                next.admin(),
                runs,
                next.locations(),
                next.environmentPaths());
        sha256 = runsSha256;
    }

    /**
     * Closes and forgets the deployments whose code has all been released (swapped out, restarted, or never run),
     * so that a reload leaves nothing of the code it retired reachable (issue 41). A deployment an added subscription
     * waits on for its retry is kept.
     */
    private void forgetReleasedDeployments() {
        for (Deployment deployment : deployments) {
            boolean waitedOn = changes.waitsOn(deployment);
            if (deployment.releasedAll() && !waitedOn) {
                deployments.remove(deployment);
                deployment.close();
            }
        }
    }

    /** Stops every retry of an added subscription: the runtime is stopping. */
    void close() {
        changes.close();
    }

    /** Closes the deployments reloads made, once the code they loaded is closed: their class loaders go with them. */
    void closeDeployments() {
        deployments.forEach(Deployment::close);
    }

    private ReloadResult refuse() {
        count("refused");
        return ReloadResult.REFUSED;
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
        if (subscriptions.live().isPresent()) {
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
