package dev.settle.runtime.live;

import dev.settle.runtime.canary.GenerationRouter;
import dev.settle.runtime.canary.Judge;
import dev.settle.runtime.canary.KeySlice;
import dev.settle.runtime.canary.MovedMessages;
import dev.settle.runtime.canary.Outcomes;
import dev.settle.runtime.canary.Thresholds;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.isolation.UploadedJar;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.HandlerContext;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription's code over time: which generation runs, the kept ones, and the swap from one to the next.
 * Deploys and rollbacks of one subscription run one at a time (this object's monitor); other subscriptions are
 * never touched.
 */
final class LiveSubscription {
    private static final Logger log = LoggerFactory.getLogger(LiveSubscription.class);

    /** Replaced by a manifest reload that swaps the subscription's code; otherwise fixed. */
    private volatile SubscriptionSpec spec;

    private volatile HandlerContext context;
    private final CodeStore store;
    private final Duration grace;
    private final LiveMetrics metrics;
    private final RetiredLoaders loaders;
    private final Time clock;
    private volatile String manifestSha256;
    private final Runnable releaseManifestLoader;
    /**
     * Replaced whole under this object's monitor; read without it by {@link #status()}. This field and the three of
     * the first generation are set by {@link FirstGeneration} before the subscription is shared.
     */
    volatile CodeStore.State state;
    /** The generation to run first when it is not the manifest's: an upload restored from the data folder. */
    Generation restored;

    GenerationRecord first;
    private CurrentGeneration port;
    /** This runtime, as records and reports name it. */
    private final String instance;
    /**
     * Why this runtime does not run the store's active generation (it cannot load it, or its package cannot be
     * fetched), or null when it does; a shared store's runtimes each say so in their status.
     */
    volatile String problem;
    /** Why the last manifest reload could not change this subscription (it runs on as it was); null when it could. */
    private volatile String reloadProblem;

    LiveSubscription(
            SubscriptionSpec spec,
            HandlerContext context,
            CodeStore store,
            String manifestSha256,
            Runnable releaseManifestLoader,
            LiveParts parts) {
        this.instance = parts.instance();
        this.releaseManifestLoader = releaseManifestLoader;
        this.spec = spec;
        this.context = context;
        this.store = store;
        this.grace = parts.grace();
        this.metrics = parts.metrics();
        this.loaders = parts.loaders();
        this.clock = parts.clock();
        this.manifestSha256 = manifestSha256;
    }

    boolean runsUpload() {
        return restored != null;
    }

    /**
     * The running generation; {@code manifestHandler} (opened by then, behind {@code manifestPort}) runs unless an
     * upload was restored.
     */
    CurrentGeneration port(LoadedHandler manifestHandler, HandlerPort manifestPort) {
        Generation generation = restored != null
                ? restored
                : new Generation(first, manifestHandler, manifestPort, null, releaseManifestLoader);
        port = new CurrentGeneration(generation);
        loaders.track(generation.handler.classLoader());
        metrics.active(spec.name(), generation.record);
        metrics.watchRamp(spec.name(), this::rampStatus);
        if (state.runningRamp().isPresent()) {
            // Started mid-ramp: joins at the recorded step before the driver starts.
            synchronized (this) {
                followRamp(state);
            }
        }
        return port;
    }

    CurrentGeneration code() {
        return port;
    }

    /**
     * Checks an uploaded JAR completely and, if it passes, swaps it in as the next generation.
     *
     * @param staged the uploaded bytes, in the data folder; moved into place or deleted here
     * @throws SwapRefusedException with every problem; the running generation is untouched
     */
    synchronized Deployed deploy(Path staged, String sha256) throws SwapRefusedException, IOException {
        refuseDuringRamp(staged, "a deploy");
        Generation next = checkedUpload(staged, sha256);
        return activate(next, "deployed", "upload to the admin API of " + instance);
    }

    /**
     * Checks an uploaded JAR completely and opens it as the next generation, not swapped in.
     *
     * @throws SwapRefusedException with every problem; nothing changed
     */
    private Generation checkedUpload(Path staged, String sha256) throws SwapRefusedException, IOException {
        Path jar = store.local(sha256);
        boolean existed = Files.exists(jar);
        Files.createDirectories(jar.getParent());
        if (existed) {
            Files.delete(staged);
        } else {
            GenerationStore.moveIntoPlace(staged, jar);
        }
        List<String> problems = new ArrayList<>(UploadedJar.entryNameProblems(jar));
        HandlerLoader loader = HandlerLoader.forUploads();
        Generation next = null;
        if (problems.isEmpty()) {
            try {
                LoadedHandler loaded = loader.load(jar, spec.handler().className());
                problems.addAll(fit(loaded));
                if (problems.isEmpty()) {
                    next = opened(
                            new GenerationRecord(
                                    state.highest() + 1,
                                    sha256,
                                    loaded.className(),
                                    GenerationRecord.Source.UPLOAD,
                                    clock.instant()),
                            loaded,
                            loader);
                }
            } catch (HandlerLoadException e) {
                problems.add(e.forUpload(jar));
            } catch (SwapRefusedException e) {
                problems.addAll(e.problems());
            }
        } else {
            problems.add("the handler was not loaded: fix the problems above first");
        }
        if (next == null) {
            loader.close();
            if (!existed && isKept(sha256).isEmpty()) {
                Files.deleteIfExists(jar);
            }
            metrics.refused(spec.name());
            log.warn("subscription '{}': upload {} refused: {}", spec.name(), sha256, String.join("; ", problems));
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
        }
        return next;
    }

    /**
     * Swaps in the handler of a reloaded manifest (its code changed) as the next generation: the manifest wins over
     * a running upload, as it does at a restart.
     *
     * @param handler loaded by the new manifest's deployment, not opened; opened here
     * @param release hands its class loader back to that deployment once it is swapped out
     */
    synchronized Deployed reloaded(
            SubscriptionSpec next,
            HandlerContext nextContext,
            LoadedHandler handler,
            String jarSha256,
            Runnable release)
            throws SwapRefusedException, IOException {
        List<String> problems = fit(handler);
        if (!problems.isEmpty()) {
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
        }
        try {
            handler.open(nextContext);
        } catch (HandlerLoadException e) {
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, List.of(e.getMessage()));
        }
        SubscriptionSpec before = spec;
        HandlerContext beforeContext = context;
        String beforeSha256 = manifestSha256;
        spec = next;
        context = nextContext;
        manifestSha256 = jarSha256;
        // Every runtime of a shared store reloads the same manifest: the first records the new code as the next
        // generation, the others take that generation as it is instead of each recording one more.
        Optional<GenerationRecord> recorded = store.shared()
                ? state.generation(state.active())
                        .filter(g -> g.source() == GenerationRecord.Source.MANIFEST
                                && g.sha256().equals(jarSha256)
                                && g.handler().equals(handler.className()))
                : Optional.empty();
        GenerationRecord record = recorded.orElseGet(() -> new GenerationRecord(
                state.highest() + 1,
                jarSha256,
                handler.className(),
                GenerationRecord.Source.MANIFEST,
                clock.instant()));
        try {
            return activate(
                    new Generation(record, handler, swappedIn(handler, next), null, release),
                    "reloaded",
                    recorded.isPresent() ? null : "manifest reload on " + instance);
        } catch (SwapRefusedException | IOException | RuntimeException e) {
            // Not swapped in: the running generation goes on as it was, with the settings it was opened with.
            spec = before;
            context = beforeContext;
            manifestSha256 = beforeSha256;
            throw e;
        }
    }

    /** Swaps back to the kept generation below the running one. */
    synchronized Deployed rollback() throws SwapRefusedException, IOException {
        refuseDuringRamp(null, "a rollback");
        int running = state.active();
        Optional<GenerationRecord> target = state.kept().stream()
                .filter(g -> g.number() < running)
                .max(Comparator.comparingInt(GenerationRecord::number));
        if (target.isEmpty()) {
            metrics.refused(spec.name());
            throw new SwapRefusedException(
                    SwapRefusedException.Reason.CONFLICT,
                    List.of("no generation older than the running one (" + running + ") is kept for subscription '"
                            + spec.name() + "'; upload the JAR to go back to instead"));
        }
        Generation previous;
        try {
            previous = open(target.get().activated(clock.instant()));
        } catch (SwapRefusedException e) {
            metrics.refused(spec.name());
            throw e;
        }
        return activate(previous, "rolled_back", "rollback on the admin API of " + instance);
    }

    /** How often a running ramp is judged, and its step's time looked at. */
    static final Duration RAMP_TICK = Duration.ofSeconds(1);

    /** A canary ramp running on this runtime: the canary generation, the ramp as recorded, the step's counts. */
    static final class RampRun {
        final Generation canary;
        volatile Ramp ramp;
        volatile Outcomes currentOutcomes = new Outcomes();
        volatile Outcomes canaryOutcomes = new Outcomes();
        volatile Judge.Judgement last;
        /** At exactly-once, the messages whose next attempt goes to the current generation; kept across steps. */
        final MovedMessages moved = new MovedMessages();
        /** Guarded by the subscription's monitor. */
        Time.Scheduled tick;

        final ExecutorService judge;

        RampRun(Generation canary, Ramp ramp, String subscription) {
            this.canary = canary;
            this.ramp = ramp;
            this.judge = Executors.newSingleThreadExecutor(runnable -> {
                Thread thread = new Thread(runnable, "settle-canary-" + subscription);
                thread.setDaemon(true);
                return thread;
            });
        }
    }

    /** The ramp running on this runtime, or null; replaced under this object's monitor, read without it. */
    private volatile RampRun ramp;

    /** The last ramp that ended on this runtime (for the status: why it was rolled back), or null. */
    private volatile Ramp lastRamp;

    /** A refusal (409) of {@code what} while a ramp runs: promote or abort it first. */
    private void refuseDuringRamp(Path staged, String what) throws SwapRefusedException, IOException {
        RampRun running = ramp;
        if (running == null) {
            return;
        }
        if (staged != null) {
            Files.deleteIfExists(staged);
        }
        metrics.refused(spec.name());
        throw new SwapRefusedException(
                SwapRefusedException.Reason.CONFLICT,
                List.of("subscription '" + spec.name() + "' runs a canary ramp of " + running.ramp.describe() + "; "
                        + what + " is refused until it ends: promote it (settle deploy --promote) or abort it"
                        + " (settle deploy --abort) first"));
    }

    /**
     * Checks an uploaded JAR completely and starts a canary ramp of it (docs/live-code.md, "Canary ramps"): the
     * ramp is recorded, then the new generation runs for the keys of the first step's slice, the current one for the
     * rest.
     *
     * @throws SwapRefusedException when a ramp runs already (conflict), the subscription cannot ramp or the JAR is
     *     refused (invalid); nothing changed
     */
    synchronized Deployed canary(Path staged, String sha256, List<Integer> steps, Duration stepEvery, Thresholds limits)
            throws SwapRefusedException, IOException {
        refuseDuringRamp(staged, "another canary");
        List<String> problems = new ArrayList<>();
        String stepProblem = Ramp.problem(steps.isEmpty() ? 0 : steps.get(0), steps, stepEvery);
        if (stepProblem != null) {
            problems.add(stepProblem.replace("ramp.steps", "the steps").replace("ramp.stepEvery", "the step time"));
        }
        if (!steps.isEmpty() && steps.get(0) == 100) {
            problems.add("the first step must be below 100% (a canary judged against nothing); deploy without"
                    + " --canary to swap it in for all keys");
        }
        if (!problems.isEmpty()) {
            Files.deleteIfExists(staged);
            metrics.refused(spec.name());
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
        }
        Generation next = checkedUpload(staged, sha256);
        Ramp started = Ramp.start(next.record.number(), steps, stepEvery, clock.instant(), limits);
        List<GenerationRecord> kept = new ArrayList<>(state.kept());
        kept.add(next.record);
        try {
            state = store.save(
                    Optional.of(state),
                    new CodeStore.State(state.active(), manifestSha256, CodeStore.kept(kept), Optional.of(started)),
                    "canary on the admin API of " + instance);
        } catch (IOException e) {
            next.handler.close();
            next.ownLoader.close();
            if (e instanceof GenerationConflictException) {
                metrics.refused(spec.name());
                throw new SwapRefusedException(SwapRefusedException.Reason.CONFLICT, List.of(e.getMessage()));
            }
            throw e;
        }
        loaders.track(next.handler.classLoader());
        begin(next, started);
        GenerationRecord current = port.current().record;
        return new Deployed(
                spec.name(), next.record.number(), next.record.sha256(), next.record.handler(), current.sha256(), 0);
    }

    /** Routes by {@code ramp}'s slice between the current generation and {@code canary}, and judges every tick. */
    private void begin(Generation canary, Ramp started) {
        RampRun run = new RampRun(canary, started, spec.name());
        ramp = run;
        route(run);
        metrics.ramp(spec.name(), started);
        log.info(
                "subscription '{}': canary ramp started: {}, {} on the rest",
                spec.name(),
                started.describe(),
                port.current());
        scheduleTick(run);
    }

    private void scheduleTick(RampRun run) {
        run.tick = clock.schedule(RAMP_TICK, () -> {
            try {
                // Off the timer's thread: a tick may swap, which waits for calls.
                run.judge.execute(() -> {
                    tick();
                    synchronized (this) {
                        if (ramp == run) {
                            scheduleTick(run);
                        }
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException ended) {
                // The ramp ended meanwhile.
            }
        });
    }

    /** Swaps in a router for the run's step, with new counts: each step is judged on its own window. */
    private void route(RampRun run) {
        run.currentOutcomes = new Outcomes();
        run.canaryOutcomes = new Outcomes();
        run.last = null;
        Generation current = port.current();
        Ramp at = run.ramp;
        GenerationRouter router = new GenerationRouter(
                new GenerationRouter.Side(current.port, current.record.number(), run.currentOutcomes),
                new GenerationRouter.Side(run.canary.port, run.canary.record.number(), run.canaryOutcomes),
                KeySlice.of(at.percent()),
                clock,
                "canary router: " + run.canary + " on " + at.percent() + "% of keys, " + current + " on the rest",
                run.moved);
        port.route(router, grace);
    }

    /**
     * Judges the running ramp's step (docs/live-code.md, "The comparison and the rollback"): a regression rolls it
     * back; a healthy step whose time has run advances; with too few calls nothing changes. Run every
     * {@link #RAMP_TICK} while a ramp runs, and by tests.
     */
    synchronized void tick() {
        RampRun run = ramp;
        if (run == null) {
            return;
        }
        Ramp at = run.ramp;
        Judge.Judgement judged =
                Judge.judge(run.canaryOutcomes.snapshot(), run.currentOutcomes.snapshot(), at.thresholds());
        run.last = judged;
        try {
            switch (at.decide(judged, clock.instant())) {
                case ROLL_BACK ->
                    end(
                            Ramp.Status.ROLLED_BACK,
                            "rolled back by itself at " + at.percent() + "%: " + judged.why(),
                            true);
                case ADVANCE, PROMOTE ->
                    advance(run, "its step of " + at.stepEvery().toSeconds() + " s ran healthy (" + judged.why() + ")");
                case STAY -> {}
            }
        } catch (GenerationConflictException lost) {
            // Every runtime judges the ramp; the first to write the step (or the end) wins under the record's fence,
            // and the others lose here and follow what it wrote, read under the fence (newer than this runtime's
            // view of the store may be yet).
            log.info(
                    "subscription '{}': another runtime wrote the canary ramp's step first; following the record: {}",
                    spec.name(),
                    lost.getMessage());
            follow(lost.latest());
        } catch (IOException | SwapRefusedException | RuntimeException e) {
            log.error("subscription '{}': the canary ramp could not go on: {}", spec.name(), e.toString());
        }
    }

    /** Moves the ramp to its next step now, by command; at the last (100%), promotes it. */
    synchronized Deployed step() throws SwapRefusedException, IOException {
        RampRun run = requireRamp("step");
        return advance(run, "stepped by a command on the admin API of " + instance);
    }

    private Deployed advance(RampRun run, String why) throws SwapRefusedException, IOException {
        Ramp at = run.ramp;
        int next = at.nextPercent();
        if (next == 100) {
            return promote(run, why);
        }
        Ramp stepped = at.atStep(next, clock.instant());
        state = store.save(Optional.of(state), state.withRamp(stepped), "canary step on " + instance);
        run.ramp = stepped;
        route(run);
        metrics.ramp(spec.name(), stepped);
        log.info("subscription '{}': canary ramp at {}% ({}): {}", spec.name(), next, why, stepped.describe());
        return deployedNow(run.canary);
    }

    /** Makes the canary the active generation now: it serves all keys; the current one is retired. */
    synchronized Deployed promote() throws SwapRefusedException, IOException {
        return promote(requireRamp("promote"), "promoted by a command on the admin API of " + instance);
    }

    private Deployed promote(RampRun run, String why) throws SwapRefusedException, IOException {
        Ramp promoted = run.ramp.atStep(100, clock.instant()).ended(Ramp.Status.PROMOTED, why, clock.instant());
        stopTicking(run);
        Deployed deployed = activate(run.canary, "promoted", "canary promoted on " + instance, promoted);
        log.info("subscription '{}': canary {} promoted: it serves all keys ({})", spec.name(), run.canary, why);
        return deployed;
    }

    /** Ends the ramp by command: the current generation serves all keys again, the canary is retired. */
    synchronized Deployed abort() throws SwapRefusedException, IOException {
        requireRamp("abort");
        end(Ramp.Status.ABORTED, "aborted by a command on the admin API of " + instance, true);
        return deployedNow(port.current());
    }

    private RampRun requireRamp(String what) throws SwapRefusedException {
        RampRun run = ramp;
        if (run == null) {
            throw new SwapRefusedException(
                    SwapRefusedException.Reason.CONFLICT,
                    List.of("subscription '" + spec.name() + "' runs no canary ramp to " + what
                            + "; start one with settle deploy --canary"));
        }
        return run;
    }

    /**
     * The current generation serves all keys again: the router is swapped out (waiting for the canary's calls), the
     * canary retired, and the ramp's end recorded ({@code write}) unless it came from the record.
     */
    private void end(Ramp.Status status, String why, boolean write) throws IOException {
        RampRun run = ramp;
        stopTicking(run);
        ramp = null;
        Generation current = port.current();
        CurrentGeneration.Swap swap = port.route(current.port, grace);
        CurrentGeneration.retireLater(swap, run.canary, grace, spec.name(), loaders);
        Ramp ended = run.ramp.ended(status, why, clock.instant());
        lastRamp = ended;
        metrics.rampEnded(spec.name(), ended);
        if (status == Ramp.Status.ROLLED_BACK) {
            log.warn(
                    "subscription '{}': canary {} {}; {} serves all keys again", spec.name(), run.canary, why, current);
        } else {
            log.info(
                    "subscription '{}': canary {} {}; {} serves all keys again", spec.name(), run.canary, why, current);
        }
        if (write) {
            state = store.save(
                    Optional.of(state),
                    state.withRamp(ended),
                    "canary " + status.name().toLowerCase(java.util.Locale.ROOT) + " on " + instance);
        }
        // Followed from the record: the state stays the record's, its ramp's end as written there. A copy ended here
        // (its own time and reason) would differ from the record, and the fence, which compares the ramp, would then
        // refuse every later write of this runtime (FleetCanaryIT: a deploy after a followed abort got 409).
    }

    private void stopTicking(RampRun run) {
        if (run.tick != null) {
            run.tick.cancel();
        }
        run.judge.shutdown();
        ramp = null;
    }

    private Deployed deployedNow(Generation generation) {
        return new Deployed(
                spec.name(),
                generation.record.number(),
                generation.record.sha256(),
                generation.record.handler(),
                port.current().record.sha256(),
                0);
    }

    /**
     * Follows a recorded ramp (another runtime started, stepped or ended it, or this one started mid-ramp): routes
     * at its step, or ends the local one as the record says.
     */
    private void followRamp(CodeStore.State desired) {
        Optional<Ramp> recorded = desired.runningRamp();
        RampRun run = ramp;
        try {
            if (recorded.isEmpty()) {
                if (run != null) {
                    Ramp.Status status = desired.ramp()
                            .filter(r -> r.generation() == run.canary.record.number())
                            .map(Ramp::status)
                            .orElse(Ramp.Status.ABORTED);
                    end(status, desired.ramp().map(Ramp::reason).orElse("the record has no ramp"), false);
                }
                return;
            }
            Ramp wanted = recorded.get();
            if (run != null && run.canary.record.number() == wanted.generation()) {
                if (run.ramp.percent() != wanted.percent()) {
                    run.ramp = wanted;
                    route(run);
                    metrics.ramp(spec.name(), wanted);
                }
                run.ramp = wanted;
                return;
            }
            if (run != null) {
                end(Ramp.Status.ABORTED, "the record names another canary", false);
            }
            Generation canary = open(desired.generation(wanted.generation()).orElseThrow());
            loaders.track(canary.handler.classLoader());
            begin(canary, wanted);
        } catch (SwapRefusedException | IOException | RuntimeException e) {
            problem = "cannot run the canary ramp of generation " + wanted(recorded) + ": " + e.getMessage();
            log.error("subscription '{}': {}", spec.name(), problem);
        }
    }

    private static String wanted(Optional<Ramp> recorded) {
        return recorded.map(r -> Integer.toString(r.generation())).orElse("?");
    }

    /** The running ramp and its step's counts for the status; empty without one (and no ramp ended here). */
    Optional<RampStatus> rampStatus() {
        RampRun run = ramp;
        if (run == null) {
            Ramp ended = lastRamp != null ? lastRamp : state.ramp().orElse(null);
            return Optional.ofNullable(ended)
                    .map(r -> new RampStatus(
                            r,
                            Outcomes.Snapshot.EMPTY,
                            Outcomes.Snapshot.EMPTY,
                            Optional.empty(),
                            port.current().record.number()));
        }
        return Optional.of(new RampStatus(
                run.ramp,
                run.canaryOutcomes.snapshot(),
                run.currentOutcomes.snapshot(),
                Optional.ofNullable(run.last),
                port.current().record.number()));
    }

    /** Not synchronized: a status is answered while a swap of this subscription waits for its calls. */
    SubscriptionStatus status() {
        CodeStore.State state = this.state;
        GenerationRecord active = port.current().record;
        return new SubscriptionStatus(
                spec.name(),
                active,
                state.kept().stream()
                        .sorted(Comparator.comparingInt(GenerationRecord::number)
                                .reversed())
                        .toList(),
                state.active(),
                Optional.ofNullable(problem),
                List.of(),
                Optional.ofNullable(reloadProblem));
    }

    /** The handler running now (or restored, before the driver started); null before either. */
    LoadedHandler runningHandler() {
        Generation running = running();
        return running == null ? null : running.handler;
    }

    /** Closes the running generation's own class loader; its handler is closed by then. */
    void closeLoader() {
        Generation running = running();
        if (running != null && running.ownLoader != null) {
            running.ownLoader.close();
        }
    }

    private Generation running() {
        return port != null ? port.current() : restored;
    }

    private Optional<GenerationRecord> isKept(String sha256) {
        return state.kept().stream().filter(g -> g.sha256().equals(sha256)).findFirst();
    }

    /**
     * Loads and opens a kept generation again, from the store or the manifest's jar, checked as an upload is (its
     * sha256 against the record, its entry names, its handler and its fit).
     */
    Generation open(GenerationRecord record) throws SwapRefusedException {
        boolean upload = record.source() == GenerationRecord.Source.UPLOAD;
        Path jar;
        try {
            jar = upload ? store.fetch(record) : spec.handler().jar();
        } catch (IOException e) {
            throw new SwapRefusedException(SwapRefusedException.Reason.CONFLICT, List.of(e.getMessage()));
        }
        try {
            if (!Files.exists(jar) || !JarDigest.of(jar).equals(record.sha256())) {
                throw new SwapRefusedException(
                        SwapRefusedException.Reason.CONFLICT,
                        List.of("generation " + record.number() + "'s code is gone: " + jar
                                + (upload ? " is missing or changed" : " (the manifest's jar) changed since")
                                + "; upload the JAR again instead"));
            }
        } catch (IOException e) {
            throw new SwapRefusedException(
                    SwapRefusedException.Reason.CONFLICT, List.of("cannot read " + jar + ": " + e.getMessage()));
        }
        if (upload) {
            List<String> names = UploadedJar.entryNameProblems(jar);
            if (!names.isEmpty()) {
                throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, names);
            }
        }
        HandlerLoader loader = upload ? HandlerLoader.forUploads() : new HandlerLoader();
        try {
            LoadedHandler loaded = loader.load(jar, Optional.of(record.handler()));
            List<String> problems = fit(loaded);
            if (!problems.isEmpty()) {
                throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
            }
            return opened(record, loaded, loader);
        } catch (HandlerLoadException e) {
            loader.close();
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, List.of(e.getMessage()));
        } catch (SwapRefusedException | RuntimeException e) {
            loader.close();
            throw e;
        }
    }

    /** Opens a loaded handler as a generation; {@code open()} failing is a refusal. */
    private Generation opened(GenerationRecord record, LoadedHandler loaded, HandlerLoader loader)
            throws SwapRefusedException {
        HandlerPort newPort = swappedIn(loaded, spec);
        try {
            loaded.open(context);
        } catch (HandlerLoadException e) {
            String problem = record.source() == GenerationRecord.Source.UPLOAD
                    ? e.forUpload(store.local(record.sha256()))
                    : e.getMessage();
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, List.of(problem));
        }
        return new Generation(record, loaded, newPort, loader);
    }

    /**
     * The port of {@code loaded} swapped in for the running code: a batch handler gathered as the running one is
     * ({@link CurrentGeneration#swappedIn}). Before the first generation runs (an upload restored at start) a batch
     * handler is refused: its gathering is made with the driver's clock and metrics, which only a running generation
     * hands on.
     */
    private HandlerPort swappedIn(LoadedHandler loaded, SubscriptionSpec spec) throws SwapRefusedException {
        if (port != null) {
            return port.swappedIn(loaded, spec);
        }
        if (loaded.isBatch()) {
            throw new SwapRefusedException(
                    SwapRefusedException.Reason.INVALID,
                    List.of("handler " + loaded.className() + " is a BatchHandler, which an upload restored at start"
                            + " cannot run yet; make its JAR the manifest's jar: and restart, or upload it again"
                            + " once the subscription runs"));
        }
        return SdkHandlerPort.swappedIn(loaded, spec);
    }

    /** Whether a loaded handler can take this subscription's messages: the declared schema, the consumer's. */
    private List<String> fit(LoadedHandler loaded) {
        if (port == null) {
            List<String> problems = new ArrayList<>();
            Preflight.schemaMisfit(spec, loaded).ifPresent(problems::add);
            return problems;
        }
        return port.misfit(loaded, spec);
    }

    /**
     * Follows a shared store's new state (docs/live-code.md, "One way for one pod and for many"): when its active
     * generation is not the running one, fetches it, checks it as an upload is checked and swaps it in with the
     * consumer open; one that cannot run leaves the running generation as it is, and says why in
     * {@link #problem()}.
     */
    synchronized void follow(CodeStore.State desired) {
        GenerationRecord running = port.current().record;
        Optional<GenerationRecord> target = desired.generation(desired.active());
        state = desired;
        if (target.isEmpty()) {
            problem = "the stored state names generation " + desired.active() + " as active but does not keep it;"
                    + " deploy again";
            log.error("subscription '{}': {}", spec.name(), problem);
            return;
        }
        if (target.get().number() == running.number() && target.get().sha256().equals(running.sha256())) {
            problem = null;
            followRamp(desired);
            return;
        }
        try {
            RampRun run = ramp;
            if (run != null && run.canary.record.number() == target.get().number()) {
                // Promoted by another runtime: the canary already open here becomes the active generation.
                activate(run.canary, "followed", null, desired.ramp().orElse(null));
            } else {
                activate(open(target.get()), "followed", null);
            }
            problem = null;
        } catch (SwapRefusedException | IOException e) {
            metrics.refused(spec.name());
            problem = "cannot run generation " + target.get().number() + " (sha256 "
                    + target.get().shortSha() + "), keeps generation " + running.number() + ": " + e.getMessage();
            log.error("subscription '{}': {}", spec.name(), problem);
        }
    }

    /** Says why the last manifest reload could not change this subscription; null: it could. */
    void reloadProblem(String problem) {
        reloadProblem = problem;
    }

    /**
     * {@code latest}, the store's state that won a write, when its active generation is {@code mine}'s code from the
     * manifest (the same sha256 and handler), recorded by another runtime reloading the same manifest; empty otherwise.
     */
    static Optional<CodeStore.State> recordedByAnother(GenerationRecord mine, CodeStore.State latest) {
        if (mine.source() != GenerationRecord.Source.MANIFEST) {
            return Optional.empty();
        }
        return Optional.of(latest)
                .filter(now -> now.generation(now.active())
                        .filter(g -> g.source() == GenerationRecord.Source.MANIFEST
                                && g.sha256().equals(mine.sha256())
                                && g.handler().equals(mine.handler()))
                        .isPresent());
    }

    /** Why this runtime does not run the store's active generation; empty when it does. */
    Optional<String> problem() {
        return Optional.ofNullable(problem);
    }

    /** The store's active generation, which may not be the running one ({@link #problem()}). */
    int desired() {
        return state.active();
    }

    /**
     * Saves the new state (unless {@code by} is null: it came from the store), swaps, and retires the old generation
     * in the background.
     */
    private Deployed activate(Generation next, String result, String by) throws IOException, SwapRefusedException {
        RampRun run = ramp;
        Ramp replaced = run == null
                ? null
                : run.ramp.ended(
                        Ramp.Status.ABORTED,
                        "replaced by a " + result.replace('_', ' ') + " of " + next,
                        clock.instant());
        return activate(next, result, by, replaced);
    }

    /**
     * As {@link #activate(Generation, String, String)}, recording {@code endedRamp} (null: none); a ramp running here
     * ends with the swap, its canary retired unless it is {@code next} (a promotion).
     */
    private Deployed activate(Generation next, String result, String by, Ramp endedRamp)
            throws IOException, SwapRefusedException {
        List<GenerationRecord> kept = new ArrayList<>(state.kept());
        kept.removeIf(g -> g.number() == next.record.number());
        kept.add(next.record);
        Optional<Ramp> rampAfter = endedRamp != null ? Optional.of(endedRamp) : state.ramp();
        try {
            state = by == null
                    ? new CodeStore.State(next.record.number(), manifestSha256, CodeStore.kept(kept), rampAfter)
                    : store.save(
                            Optional.of(state),
                            new CodeStore.State(next.record.number(), manifestSha256, CodeStore.kept(kept), rampAfter),
                            by);
        } catch (IOException e) {
            Optional<CodeStore.State> adopted = e instanceof GenerationConflictException conflict
                    ? recordedByAnother(next.record, conflict.latest())
                    : Optional.empty();
            if (adopted.isPresent()) {
                // Every runtime of the fleet reloads the same manifest, at about the same time: another one recorded
                // this very code first (its record is why this write lost), so this one runs that record.
                state = adopted.get();
                GenerationRecord recorded =
                        adopted.get().generation(adopted.get().active()).orElseThrow();
                log.info(
                        "subscription '{}': another runtime recorded the same code first, as generation {}: running it",
                        spec.name(),
                        recorded.number());
                return activate(
                        new Generation(recorded, next.handler, next.port, next.ownLoader, next.releaseShared),
                        result,
                        null);
            }
            next.handler.close();
            if (next.ownLoader != null) {
                next.ownLoader.close();
            }
            if (e instanceof GenerationConflictException) {
                metrics.refused(spec.name());
                log.warn("subscription '{}': {} refused: {}", spec.name(), next, e.getMessage());
                throw new SwapRefusedException(SwapRefusedException.Reason.CONFLICT, List.of(e.getMessage()));
            }
            throw e;
        }
        problem = null;
        loaders.track(next.handler.classLoader());
        CurrentGeneration.Swap swap = port.swapIn(next, grace, spec.name(), loaders);
        Generation retired = swap.retired();
        RampRun run = ramp;
        if (run != null || endedRamp != null) {
            // The swap replaced the router: the next generation serves every key.
            if (run != null) {
                stopTicking(run);
                if (run.canary != next) {
                    CurrentGeneration.retireLater(swap, run.canary, grace, spec.name(), loaders);
                }
            }
            lastRamp = endedRamp;
            if (endedRamp != null) {
                metrics.rampEnded(spec.name(), endedRamp);
            }
        }
        metrics.swapped(spec.name(), retired.record, next.record, result);
        double swapMillis = Math.round(swap.pauseNanos() / 1_000.0) / 1_000.0;
        log.info(
                "subscription '{}': {} {} swapped in for {} (handler calls waited {} ms)",
                spec.name(),
                result.replace('_', ' '),
                next,
                retired,
                swapMillis);
        return new Deployed(
                spec.name(),
                next.record.number(),
                next.record.sha256(),
                next.record.handler(),
                retired.record.sha256(),
                swapMillis);
    }
}
