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
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.runtime.observe.SubscriptionProbe;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
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

    /**
     * The deployments reloads made whose code runs (or waits for a retry): each owns the class loaders of the handlers
     * it started; forgotten once all its code is released, the rest closed at the end.
     */
    final List<Deployment> deployments = new CopyOnWriteArrayList<>();

    /** Subscriptions a reload added whose code did not open yet, by name. Guarded by Settle's monitor. */
    private final Map<String, Pending> pending = new LinkedHashMap<>();
    /** Runs the retries of {@link #pending}, off the timer's one thread (opening code may take long). */
    private final ExecutorService retrier = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "settle-reload-retry");
        thread.setDaemon(true);
        return thread;
    });

    private final Settle settle;
    private final HealthEndpoint health;
    private final Counter reloads;
    private final Duration grace;
    private final Time time;
    private Manifest manifest;
    private Map<String, String> sha256 = Map.of();

    Reloads(Settle settle, HealthEndpoint health, PrometheusRegistry registry, Duration grace, Time time) {
        this.settle = settle;
        this.health = health;
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
        // Each subscription all or nothing: one that fails runs on as it was (or, added, is retried), the rest apply.
        Map<String, String> failed = new LinkedHashMap<>();
        for (Map.Entry<String, ManifestChange.Kind> entry :
                change.subscriptions().entrySet()) {
            String name = entry.getKey();
            try {
                applyTo(name, entry.getValue(), next, specs.get(name), nextSha256.get(name), removed);
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
                        pending.containsKey(name)
                                ? "is retried with backoff and unready until it starts"
                                : "runs on as it was",
                        failed.get(name));
            }
        }
        deployments.add(next);
        settle.live()
                .ifPresent(live -> change.subscriptions()
                        .keySet()
                        .forEach(name -> live.reloadProblem(name, Optional.ofNullable(failed.get(name)))));
        running(next.manifest(), nextSha256, failed.keySet());
        forgetReleasedDeployments();
        if (failed.isEmpty()) {
            count("applied");
            log.info("manifest {} reloaded in {} ms: {}", file, (time.nanoTime() - started) / 1_000_000, change);
            return Settle.ReloadResult.APPLIED;
        }
        count("failed");
        log.error(
                "manifest {} reloaded in part in {} ms: {}; failed: {} (each runs on as it was, or is retried if it was"
                        + " added; the next reload tries the rest again)",
                file,
                (time.nanoTime() - started) / 1_000_000,
                change,
                String.join(", ", failed.keySet()));
        return Settle.ReloadResult.FAILED;
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
            boolean asItWas = failed.contains(spec.name())
                    && before.containsKey(spec.name())
                    && !pending.containsKey(spec.name());
            runs.add(asItWas ? before.get(spec.name()) : spec);
            runsSha256.put(spec.name(), asItWas ? sha256.get(spec.name()) : nextSha256.get(spec.name()));
        }
        for (String name : failed) {
            // A removal that failed: it still runs.
            if (!runsSha256.containsKey(name) && before.containsKey(name) && settle.running(name) != null) {
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
            boolean waitedOn = pending.values().stream().anyMatch(waiting -> waiting.from == deployment);
            if (deployment.releasedAll() && !waitedOn) {
                deployments.remove(deployment);
                deployment.close();
            }
        }
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
        Pending waiting = pending.get(name);
        if (waiting != null) {
            // Added by an earlier reload and not started yet: nothing of it runs, so any change starts it afresh.
            if (kind == ManifestChange.Kind.UNCHANGED) {
                next.release(name);
                return;
            }
            forget(waiting);
            if (kind == ManifestChange.Kind.REMOVED) {
                log.info("subscription '{}': removed by a manifest reload before it started", name);
                return;
            }
            start(next, spec);
            return;
        }
        switch (kind) {
            case UNCHANGED -> next.release(name);
            case REMOVED -> removed.add(settle.stopSubscription(name));
            case ADDED -> start(next, spec);
            case SWAP -> swap(next, spec, jarSha256, live);
            case RESTART -> restart(next, spec, live);
        }
    }

    /**
     * Restarts a subscription's consumer with {@code spec}'s settings, all or nothing: when its new code or driver
     * cannot open, the running one is started again as it was and this throws.
     */
    private void restart(Deployment next, SubscriptionSpec spec, LiveCode live) throws HandlerLoadException {
        String name = spec.name();
        RunningSubscription running = settle.running(name);
        boolean function = running.code().isEmpty();
        if (live != null && !function) {
            // With the admin API, the running generation (an upload, perhaps) goes on running.
            next.release(name);
            RunningSubscription stopped = settle.stopSubscription(name);
            try {
                settle.startSubscription(stopped.withSpec(spec));
            } catch (RuntimeException e) {
                settle.startSubscription(stopped.withSpec(stopped.spec()));
                throw e;
            }
            return;
        }
        RunningSubscription fresh;
        if (function) {
            // A function stops before its new instance initialises: initialize reads back the state the old one
            // wrote. (Functions keep no generations: with the admin API too, their code is the manifest's.)
            settle.stopSubscription(name);
            try {
                fresh = settle.opener().open(next, spec);
            } catch (HandlerLoadException | RuntimeException e) {
                settle.startSubscription(running);
                throw e;
            }
        } else {
            // A handler's new code opens beside the running one: when it cannot, nothing running was touched.
            fresh = settle.opener().open(next, spec);
            settle.stopSubscription(name);
        }
        try {
            settle.startSubscription(fresh);
        } catch (RuntimeException e) {
            fresh.closeCode();
            fresh.closeOutputs();
            settle.startSubscription(running);
            throw e;
        }
        running.closeCode();
        running.closeOutputs();
        log.info("subscription '{}': restarted by a manifest reload", name);
    }

    /**
     * Opens and starts an added subscription; when its code cannot open (or its driver start), it is shown unready
     * with the cause and retried with backoff until it starts, or until a reload changes or removes it; this throws.
     */
    private void start(Deployment next, SubscriptionSpec spec) throws HandlerLoadException {
        try {
            open(next, spec);
        } catch (HandlerLoadException | RuntimeException e) {
            Pending waiting = new Pending(next, spec);
            pending.put(spec.name(), waiting);
            waiting.failed(e);
            health.watch(waiting);
            retryLater(waiting);
            throw e;
        }
        log.info("subscription '{}': started by a manifest reload", spec.name());
    }

    /** Opens and starts a subscription of {@code next}; closes what it opened again when the driver cannot start. */
    private void open(Deployment next, SubscriptionSpec spec) throws HandlerLoadException {
        RunningSubscription opened = settle.opener().open(next, spec);
        try {
            settle.startSubscription(opened);
        } catch (RuntimeException e) {
            opened.closeCode();
            opened.closeOutputs();
            throw e;
        }
    }

    private void retryLater(Pending waiting) {
        try {
            time.schedule(waiting.delay, () -> {
                try {
                    retrier.execute(() -> retry(waiting));
                } catch (RejectedExecutionException stopping) {
                    // Settle is stopping: nothing is retried any more.
                }
            });
        } catch (RejectedExecutionException stopping) {
            // Settle is stopping: nothing is retried any more.
        }
    }

    /** Tries an added subscription again, unless a reload changed or removed it meanwhile. Off the timer's thread. */
    private void retry(Pending waiting) {
        String name = waiting.spec.name();
        synchronized (settle) {
            if (settle.isClosed() || pending.get(name) != waiting) {
                return;
            }
            try {
                waiting.from.loadAgain(name);
                open(waiting.from, waiting.spec);
            } catch (HandlerLoadException | RuntimeException e) {
                waiting.from.release(name);
                waiting.failed(e);
                log.warn(
                        "subscription '{}': attempt {} to start it failed, next in {}: {}",
                        name,
                        waiting.attempts,
                        DurationText.format(waiting.delay),
                        waiting.cause);
                retryLater(waiting);
                return;
            }
            pending.remove(name);
            log.info("subscription '{}': started by a manifest reload, at attempt {}", name, waiting.attempts + 1);
        }
    }

    /** Stops retrying an added subscription and takes it out of /readyz. */
    private void forget(Pending waiting) {
        pending.remove(waiting.spec.name());
        health.unwatch(waiting.spec.name());
        waiting.from.release(waiting.spec.name());
    }

    /** Stops every retry: Settle is stopping. Under Settle's monitor. */
    void close() {
        retrier.shutdownNow();
        List.copyOf(pending.values()).forEach(this::forget);
    }

    /**
     * A subscription a reload added whose code did not open: /readyz shows it unready, with why, until a retry starts
     * it (then its driver's probe takes its place). Retried after 1 s, then twice as long each time, up to a minute.
     */
    private static final class Pending implements SubscriptionProbe {
        private static final Duration FIRST = Duration.ofSeconds(1);
        private static final Duration LONGEST = Duration.ofMinutes(1);

        final Deployment from;
        final SubscriptionSpec spec;
        /** Guarded by Settle's monitor; read by probes. */
        volatile String cause;

        volatile Duration delay = Duration.ZERO;
        volatile int attempts;

        Pending(Deployment from, SubscriptionSpec spec) {
            this.from = from;
            this.spec = spec;
        }

        void failed(Throwable e) {
            attempts++;
            cause = e.getMessage() != null ? e.getMessage() : e.toString();
            Duration doubled = delay.isZero() ? FIRST : delay.multipliedBy(2);
            delay = doubled.compareTo(LONGEST) > 0 ? LONGEST : doubled;
        }

        @Override
        public String subscription() {
            return spec.name();
        }

        @Override
        public boolean alive() {
            // Waiting to be retried is not a dead receive loop: restarting the process would not help more.
            return true;
        }

        @Override
        public Optional<String> failure() {
            return Optional.empty();
        }

        @Override
        public Duration longestRunningCall() {
            return Duration.ZERO;
        }

        @Override
        public Duration handlerTimeout() {
            return spec.handlerTimeout();
        }

        @Override
        public boolean connected() {
            return false;
        }

        @Override
        public Optional<String> waitingFor() {
            return Optional.of("added by a manifest reload, its code did not open (" + attempts + " attempts, next in "
                    + DurationText.format(delay) + "): " + cause);
        }
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
