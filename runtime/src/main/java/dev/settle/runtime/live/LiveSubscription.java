package dev.settle.runtime.live;

import dev.settle.runtime.canary.Thresholds;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.HandlerContext;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription's code over time: which generation runs, the kept ones, and the swap from one to the next.
 * Deploys and rollbacks of one subscription run one at a time (this object's monitor); other subscriptions are
 * never touched.
 */
final class LiveSubscription implements CanaryRamp.Subscription, GenerationOpener.Subscription {
    private static final Logger log = LoggerFactory.getLogger(LiveSubscription.class);

    // Its own parts, CanaryRamp and GenerationOpener, see it through the narrow interfaces it implements for them, and
    // call them under this object's monitor as its deploys do.

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
     * Replaced whole under this object's monitor; read without it by {@link #status()}. This field and the first
     * generation are set by {@link FirstGeneration} before the subscription is shared ({@link #startsWith}).
     */
    private volatile CodeStore.State state;
    /** The generation to run first when it is not the manifest's: an upload restored from the data folder. */
    private Generation restored;

    private GenerationRecord first;
    private CurrentGeneration port;
    /** This runtime, as records and reports name it. */
    private final String instance;
    /**
     * Why this runtime does not run the store's active generation (it cannot load it, or its package cannot be
     * fetched), or null when it does; a shared store's runtimes each say so in their status.
     */
    private volatile String problem;
    /** Why the last manifest reload could not change this subscription (it runs on as it was); null when it could. */
    private volatile String reloadProblem;
    /** Loads, checks and opens the code of a next generation. */
    private final GenerationOpener opener;
    /** The canary ramp: its steps, judging, promotion and abort, and the ramp recorded by another runtime. */
    private final CanaryRamp ramp;

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
        this.opener = new GenerationOpener(this, parts);
        this.ramp = new CanaryRamp(this, parts);
    }

    /**
     * {@link FirstGeneration}'s choice, before the subscription is shared: {@code first} runs first, {@code state} is
     * the store's state it was chosen from (or written with).
     */
    void startsWith(GenerationRecord first, CodeStore.State state) {
        this.first = first;
        this.state = state;
    }

    /** {@link FirstGeneration}'s: the upload restored from the data folder, opened, runs first. */
    void restores(Generation upload) {
        restored = upload;
    }

    @Override
    public String name() {
        return spec.name();
    }

    @Override
    public SubscriptionSpec spec() {
        return spec;
    }

    @Override
    public HandlerContext context() {
        return context;
    }

    @Override
    public int nextNumber() {
        return state.highest() + 1;
    }

    @Override
    public boolean keeps(String sha256) {
        return state.kept().stream().anyMatch(g -> g.sha256().equals(sha256));
    }

    @Override
    public Optional<Ramp> recordedRamp() {
        return state.ramp();
    }

    @Override
    public void recordCanary(GenerationRecord canary, Ramp ramp, String by) throws IOException {
        List<GenerationRecord> kept = new ArrayList<>(state.kept());
        kept.add(canary);
        state = store.save(
                Optional.of(state),
                new CodeStore.State(state.active(), manifestSha256, CodeStore.kept(kept), Optional.of(ramp)),
                by);
    }

    @Override
    public void recordRamp(Ramp ramp, String by) throws IOException {
        state = store.save(Optional.of(state), state.withRamp(ramp), by);
    }

    @Override
    public void cannotRun(String problem) {
        this.problem = problem;
    }

    @Override
    public Generation checkedUpload(Path staged, String sha256) throws SwapRefusedException, IOException {
        return opener.checkedUpload(staged, sha256);
    }

    @Override
    public CodeStore store() {
        return store;
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
                ramp.follow(state);
            }
        }
        return port;
    }

    @Override
    public CurrentGeneration code() {
        return port;
    }

    /**
     * Checks an uploaded JAR completely and, if it passes, swaps it in as the next generation.
     *
     * @param staged the uploaded bytes, in the data folder; moved into place or deleted here
     * @throws SwapRefusedException with every problem; the running generation is untouched
     */
    synchronized Deployed deploy(Path staged, String sha256) throws SwapRefusedException, IOException {
        ramp.refuseDuringRamp(staged, "a deploy");
        Generation next = opener.checkedUpload(staged, sha256);
        return activate(next, "deployed", "upload to the admin API of " + instance);
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
        List<String> problems = opener.fit(handler);
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
                ? state.generation(state.active()).filter(g -> g.isManifestCode(jarSha256, handler.className()))
                : Optional.empty();
        GenerationRecord record = recorded.orElseGet(() -> new GenerationRecord(
                nextNumber(), jarSha256, handler.className(), GenerationRecord.Source.MANIFEST, clock.instant()));
        try {
            return activate(
                    new Generation(record, handler, opener.swappedIn(handler, next), null, release),
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
        ramp.refuseDuringRamp(null, "a rollback");
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
        return ramp.start(staged, sha256, steps, stepEvery, limits);
    }

    /**
     * Judges the running ramp's step (docs/live-code.md, "The comparison and the rollback"): a regression rolls it
     * back; a healthy step whose time has run advances; with too few calls nothing changes. Run every
     * {@link CanaryRamp#TICK} while a ramp runs, and by tests.
     */
    @Override
    public synchronized void tick() {
        ramp.tick();
    }

    /** Moves the ramp to its next step now, by command; at the last (100%), promotes it. */
    synchronized Deployed step() throws SwapRefusedException, IOException {
        return ramp.step();
    }

    /** Makes the canary the active generation now: it serves all keys; the current one is retired. */
    synchronized Deployed promote() throws SwapRefusedException, IOException {
        return ramp.promote();
    }

    /** Ends the ramp by command: the current generation serves all keys again, the canary is retired. */
    synchronized Deployed abort() throws SwapRefusedException, IOException {
        return ramp.abort();
    }

    /** The running ramp and its step's counts for the status; empty without one (and no ramp ended here). */
    Optional<RampStatus> rampStatus() {
        return ramp.status();
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

    /**
     * Loads and opens a kept generation again, from the store or the manifest's jar, checked as an upload is (its
     * sha256 against the record, its entry names, its handler and its fit).
     */
    @Override
    public Generation open(GenerationRecord record) throws SwapRefusedException {
        return opener.open(record);
    }

    /**
     * Follows a shared store's new state (docs/live-code.md, "One way for one pod and for many"): when its active
     * generation is not the running one, fetches it, checks it as an upload is checked and swaps it in with the
     * consumer open; one that cannot run leaves the running generation as it is, and says why in
     * {@link #problem()}.
     */
    @Override
    public synchronized void follow(CodeStore.State desired) {
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
            ramp.follow(desired);
            return;
        }
        try {
            Generation canary = ramp.canaryNumbered(target.get().number());
            if (canary != null) {
                // Promoted by another runtime: the canary already open here becomes the active generation.
                activate(canary, "followed", null, desired.ramp().orElse(null));
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
        return activate(next, result, by, ramp.replacedBy(next, result));
    }

    /**
     * As {@link #activate(Generation, String, String)}, recording {@code endedRamp} (null: none); a ramp running here
     * ends with the swap, its canary retired unless it is {@code next} (a promotion).
     */
    @Override
    public Deployed activate(Generation next, String result, String by, Ramp endedRamp)
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
                    ? conflict.recordedByAnother(next.record)
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
        ramp.endedBySwap(next, swap, endedRamp);
        metrics.swapped(spec.name(), retired.record, next.record, result);
        double swapMillis = Math.round(swap.pauseNanos() / 1_000.0) / 1_000.0;
        log.info(
                "subscription '{}': {} {} swapped in for {} (handler calls waited {} ms)",
                spec.name(),
                result.replace('_', ' '),
                next,
                retired,
                swapMillis);
        return Deployed.of(spec.name(), next.record, retired.record.sha256(), swapMillis);
    }
}
