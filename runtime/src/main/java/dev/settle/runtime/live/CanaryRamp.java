package dev.settle.runtime.live;

import dev.settle.runtime.canary.GenerationRouter;
import dev.settle.runtime.canary.Judge;
import dev.settle.runtime.canary.KeySlice;
import dev.settle.runtime.canary.MovedMessages;
import dev.settle.runtime.canary.Outcomes;
import dev.settle.runtime.canary.Thresholds;
import dev.settle.runtime.time.Time;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription's canary ramp on this runtime (docs/live-code.md, "Canary ramps"): starting it, routing each step
 * between the current generation and the canary, judging the step every {@link #TICK}, stepping, promoting, aborting,
 * and following the ramp that another runtime recorded.
 *
 * <p>Every method but {@link #status()} runs under its subscription's monitor, the one its deploys and swaps hold: a
 * ramp's step and a swap of the same subscription never interleave.
 */
final class CanaryRamp {
    private static final Logger log = LoggerFactory.getLogger(CanaryRamp.class);

    /** How often a running ramp is judged, and its step's time looked at. */
    static final Duration TICK = Duration.ofSeconds(1);

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

    /** What a ramp reads, records and swaps of its subscription; its monitor is the subscription's. */
    interface Subscription {
        String name();

        /** The running code, which routes between the current generation and the canary. */
        CurrentGeneration code();

        /** The ramp the store's state records, running or ended; empty without one. */
        Optional<Ramp> recordedRamp();

        /** Records {@code canary} as kept and {@code ramp} as running ({@code by} in the store's history). */
        void recordCanary(GenerationRecord canary, Ramp ramp, String by) throws IOException;

        /** Records {@code ramp}'s step or end. */
        void recordRamp(Ramp ramp, String by) throws IOException;

        /** Judges the running step under the subscription's monitor ({@link #tick}). */
        void tick();

        /** Follows the store's state that won a write ({@link LiveSubscription#follow}). */
        void follow(CodeStore.State desired);

        /** Swaps {@code next} in for every key ({@link LiveSubscription#activate}). */
        Deployed activate(Generation next, String result, String by, Ramp endedRamp)
                throws IOException, SwapRefusedException;

        /** Says why this runtime cannot run what the store records, in its status. */
        void cannotRun(String problem);

        /** An uploaded JAR checked and opened as a next generation ({@link GenerationOpener#checkedUpload}). */
        Generation checkedUpload(Path staged, String sha256) throws SwapRefusedException, IOException;

        /** A kept generation loaded and opened again ({@link GenerationOpener#open}). */
        Generation open(GenerationRecord record) throws SwapRefusedException;
    }

    private final Subscription live;
    /** The metrics, the clock, the swap's grace, the retired loaders' watch and this runtime's name. */
    private final LiveParts parts;

    /** The ramp running on this runtime, or null; replaced under the subscription's monitor, read without it. */
    private volatile RampRun ramp;

    /** The last ramp that ended on this runtime (for the status: why it was rolled back), or null. */
    private volatile Ramp lastRamp;

    CanaryRamp(Subscription live, LiveParts parts) {
        this.live = live;
        this.parts = parts;
    }

    /** A refusal (409) of {@code what} while a ramp runs: promote or abort it first. */
    void refuseDuringRamp(Path staged, String what) throws SwapRefusedException, IOException {
        RampRun running = ramp;
        if (running == null) {
            return;
        }
        if (staged != null) {
            Files.deleteIfExists(staged);
        }
        parts.metrics().refused(live.name());
        throw SwapRefusedException.duringRamp(live.name(), running.ramp, what, "");
    }

    /** See {@link LiveSubscription#canary}. */
    Deployed start(Path staged, String sha256, List<Integer> steps, Duration stepEvery, Thresholds limits)
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
            parts.metrics().refused(live.name());
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
        }
        Generation next = live.checkedUpload(staged, sha256);
        Ramp started =
                Ramp.start(next.record.number(), steps, stepEvery, parts.clock().instant(), limits);
        try {
            live.recordCanary(next.record, started, "canary on the admin API of " + parts.instance());
        } catch (IOException e) {
            next.handler.close();
            next.ownLoader.close();
            if (e instanceof GenerationConflictException) {
                parts.metrics().refused(live.name());
                throw new SwapRefusedException(SwapRefusedException.Reason.CONFLICT, List.of(e.getMessage()));
            }
            throw e;
        }
        parts.loaders().track(next.handler.classLoader());
        begin(next, started);
        GenerationRecord current = live.code().current().record;
        return Deployed.of(live.name(), next.record, current.sha256(), 0);
    }

    /** Routes by {@code ramp}'s slice between the current generation and {@code canary}, and judges every tick. */
    private void begin(Generation canary, Ramp started) {
        RampRun run = new RampRun(canary, started, live.name());
        ramp = run;
        route(run);
        parts.metrics().ramp(live.name(), started);
        log.info(
                "subscription '{}': canary ramp started: {}, {} on the rest",
                live.name(),
                started.describe(),
                live.code().current());
        scheduleTick(run);
    }

    private void scheduleTick(RampRun run) {
        run.tick = parts.clock().schedule(TICK, () -> {
            try {
                // Off the timer's thread: a tick may swap, which waits for calls.
                run.judge.execute(() -> {
                    live.tick();
                    synchronized (live) {
                        if (ramp == run) {
                            scheduleTick(run);
                        }
                    }
                });
            } catch (RejectedExecutionException ended) {
                // The ramp ended meanwhile.
            }
        });
    }

    /** Swaps in a router for the run's step, with new counts: each step is judged on its own window. */
    private void route(RampRun run) {
        run.currentOutcomes = new Outcomes();
        run.canaryOutcomes = new Outcomes();
        run.last = null;
        Generation current = live.code().current();
        Ramp at = run.ramp;
        GenerationRouter router = new GenerationRouter(
                new GenerationRouter.Side(current.port, current.record.number(), run.currentOutcomes),
                new GenerationRouter.Side(run.canary.port, run.canary.record.number(), run.canaryOutcomes),
                KeySlice.of(at.percent()),
                parts.clock(),
                "canary router: " + run.canary + " on " + at.percent() + "% of keys, " + current + " on the rest",
                run.moved);
        live.code().route(router, parts.grace());
    }

    /** See {@link LiveSubscription#tick}. */
    void tick() {
        RampRun run = ramp;
        if (run == null) {
            return;
        }
        Ramp at = run.ramp;
        Judge.Judgement judged =
                Judge.judge(run.canaryOutcomes.snapshot(), run.currentOutcomes.snapshot(), at.thresholds());
        run.last = judged;
        try {
            switch (at.decide(judged, parts.clock().instant())) {
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
                    live.name(),
                    lost.getMessage());
            live.follow(lost.latest());
        } catch (IOException | SwapRefusedException | RuntimeException e) {
            log.error("subscription '{}': the canary ramp could not go on: {}", live.name(), e.toString());
        }
    }

    /** See {@link LiveSubscription#step}. */
    Deployed step() throws SwapRefusedException, IOException {
        RampRun run = requireRamp("step");
        return advance(run, "stepped by a command on the admin API of " + parts.instance());
    }

    private Deployed advance(RampRun run, String why) throws SwapRefusedException, IOException {
        Ramp at = run.ramp;
        int next = at.nextPercent();
        if (next == 100) {
            return promote(run, why);
        }
        Ramp stepped = at.atStep(next, parts.clock().instant());
        live.recordRamp(stepped, "canary step on " + parts.instance());
        run.ramp = stepped;
        route(run);
        parts.metrics().ramp(live.name(), stepped);
        log.info("subscription '{}': canary ramp at {}% ({}): {}", live.name(), next, why, stepped.describe());
        return deployedNow(run.canary);
    }

    /** See {@link LiveSubscription#promote}. */
    Deployed promote() throws SwapRefusedException, IOException {
        return promote(requireRamp("promote"), "promoted by a command on the admin API of " + parts.instance());
    }

    private Deployed promote(RampRun run, String why) throws SwapRefusedException, IOException {
        Ramp promoted = run.ramp
                .atStep(100, parts.clock().instant())
                .ended(Ramp.Status.PROMOTED, why, parts.clock().instant());
        stopTicking(run);
        Deployed deployed = live.activate(run.canary, "promoted", "canary promoted on " + parts.instance(), promoted);
        log.info("subscription '{}': canary {} promoted: it serves all keys ({})", live.name(), run.canary, why);
        return deployed;
    }

    /** See {@link LiveSubscription#abort}. */
    Deployed abort() throws SwapRefusedException, IOException {
        requireRamp("abort");
        end(Ramp.Status.ABORTED, "aborted by a command on the admin API of " + parts.instance(), true);
        return deployedNow(live.code().current());
    }

    private RampRun requireRamp(String what) throws SwapRefusedException {
        RampRun run = ramp;
        if (run == null) {
            throw new SwapRefusedException(
                    SwapRefusedException.Reason.CONFLICT,
                    List.of("subscription '" + live.name() + "' runs no canary ramp to " + what
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
        Generation current = live.code().current();
        CurrentGeneration.Swap swap = live.code().route(current.port, parts.grace());
        CurrentGeneration.retireLater(swap, run.canary, parts.grace(), live.name(), parts.loaders());
        Ramp ended = run.ramp.ended(status, why, parts.clock().instant());
        lastRamp = ended;
        parts.metrics().rampEnded(live.name(), ended);
        if (status == Ramp.Status.ROLLED_BACK) {
            log.warn(
                    "subscription '{}': canary {} {}; {} serves all keys again", live.name(), run.canary, why, current);
        } else {
            log.info(
                    "subscription '{}': canary {} {}; {} serves all keys again", live.name(), run.canary, why, current);
        }
        if (write) {
            live.recordRamp(ended, "canary " + status.name().toLowerCase(Locale.ROOT) + " on " + parts.instance());
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
        return Deployed.of(
                live.name(), generation.record, live.code().current().record.sha256(), 0);
    }

    /**
     * Follows a recorded ramp (another runtime started, stepped or ended it, or this one started mid-ramp): routes
     * at its step, or ends the local one as the record says.
     */
    void follow(CodeStore.State desired) {
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
                    parts.metrics().ramp(live.name(), wanted);
                }
                run.ramp = wanted;
                return;
            }
            if (run != null) {
                end(Ramp.Status.ABORTED, "the record names another canary", false);
            }
            Generation canary =
                    live.open(desired.generation(wanted.generation()).orElseThrow());
            parts.loaders().track(canary.handler.classLoader());
            begin(canary, wanted);
        } catch (SwapRefusedException | IOException | RuntimeException e) {
            String problem = "cannot run the canary ramp of generation " + wanted(recorded) + ": " + e.getMessage();
            live.cannotRun(problem);
            log.error("subscription '{}': {}", live.name(), problem);
        }
    }

    private static String wanted(Optional<Ramp> recorded) {
        return recorded.map(r -> Integer.toString(r.generation())).orElse("?");
    }

    /** The running ramp and its step's counts for the status; empty without one (and no ramp ended here). */
    Optional<RampStatus> status() {
        RampRun run = ramp;
        if (run == null) {
            Ramp ended = lastRamp != null ? lastRamp : live.recordedRamp().orElse(null);
            return Optional.ofNullable(ended)
                    .map(r -> new RampStatus(
                            r,
                            Outcomes.Snapshot.EMPTY,
                            Outcomes.Snapshot.EMPTY,
                            Optional.empty(),
                            live.code().current().record.number()));
        }
        return Optional.of(new RampStatus(
                run.ramp,
                run.canaryOutcomes.snapshot(),
                run.currentOutcomes.snapshot(),
                Optional.ofNullable(run.last),
                live.code().current().record.number()));
    }

    /** The canary open here when it is generation {@code number}, or null: promoted by another runtime. */
    Generation canaryNumbered(int number) {
        RampRun run = ramp;
        return run != null && run.canary.record.number() == number ? run.canary : null;
    }

    /** The running ramp as it ends because {@code next} is swapped in ({@code result}); null without one. */
    Ramp replacedBy(Generation next, String result) {
        RampRun run = ramp;
        return run == null
                ? null
                : run.ramp.ended(
                        Ramp.Status.ABORTED,
                        "replaced by a " + result.replace('_', ' ') + " of " + next,
                        parts.clock().instant());
    }

    /**
     * After {@code swap} put {@code next} in for every key: a ramp running here ends with it, its canary retired
     * unless it is {@code next} (a promotion); {@code endedRamp} (null: none) is the ramp's end as recorded.
     */
    void endedBySwap(Generation next, CurrentGeneration.Swap swap, Ramp endedRamp) {
        RampRun run = ramp;
        if (run == null && endedRamp == null) {
            return;
        }
        // The swap replaced the router: the next generation serves every key.
        if (run != null) {
            stopTicking(run);
            if (run.canary != next) {
                CurrentGeneration.retireLater(swap, run.canary, parts.grace(), live.name(), parts.loaders());
            }
        }
        lastRamp = endedRamp;
        if (endedRamp != null) {
            parts.metrics().rampEnded(live.name(), endedRamp);
        }
    }
}
