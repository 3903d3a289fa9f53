package dev.settle.runtime.live;

import dev.settle.runtime.canary.Judge;
import dev.settle.runtime.canary.Thresholds;
import dev.settle.runtime.manifest.UntrustedText;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * A canary ramp as data, part of a subscription's record (docs/live-code.md, "Canary ramps"): the canary generation,
 * the slice of keys it runs for now ({@code percent}), the steps it goes through, how long each step runs before it
 * advances (zero: only by command), when the step started, where the ramp stands and why, and the thresholds it is
 * judged by. A runtime that starts mid-ramp reads it and joins at the current step.
 *
 * @param reason why the ramp ended as it did (a rollback's comparison, who aborted it); empty while it runs
 */
public record Ramp(
        int generation,
        int percent,
        List<Integer> steps,
        Duration stepEvery,
        Instant stepStartedAt,
        Status status,
        String reason,
        Thresholds thresholds) {

    /** Where a ramp stands. */
    public enum Status {
        /** The canary runs for {@code percent} of the keys. */
        RUNNING,
        /** It served all keys and became the active generation. */
        PROMOTED,
        /** Its outcomes regressed past the thresholds: the current generation serves all keys again. */
        ROLLED_BACK,
        /** Ended by a command: the current generation serves all keys again. */
        ABORTED
    }

    private static final String PREFIX = "ramp.";
    private static final int MAX_REASON = 2_000;

    public Ramp {
        steps = List.copyOf(steps);
        Objects.requireNonNull(stepEvery, "stepEvery");
        Objects.requireNonNull(stepStartedAt, "stepStartedAt");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(thresholds, "thresholds");
        String problem = problem(percent, steps, stepEvery);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /**
     * Why a ramp of these steps cannot run, or null: each step a whole percent from 1 to 100, rising, the last 100
     * (the canary then serves all keys: it is promoted), {@code percent} one of them, the step time not negative.
     */
    static String problem(int percent, List<Integer> steps, Duration stepEvery) {
        if (steps.isEmpty() || steps.get(steps.size() - 1) != 100) {
            return "ramp.steps must end at 100 (the canary then serves all keys), was " + steps;
        }
        for (int i = 0; i < steps.size(); i++) {
            int step = steps.get(i);
            if (step < 1 || step > 100 || (i > 0 && step <= steps.get(i - 1))) {
                return "ramp.steps must be whole percents from 1 to 100, each above the one before, was " + steps;
            }
        }
        if (!steps.contains(percent)) {
            return "ramp.percent must be one of ramp.steps " + steps + ", was " + percent;
        }
        if (stepEvery.isNegative()) {
            return "ramp.stepEvery must not be negative, was " + stepEvery;
        }
        return null;
    }

    /** A ramp starting now at its first step. */
    static Ramp start(int generation, List<Integer> steps, Duration stepEvery, Instant now, Thresholds thresholds) {
        return new Ramp(generation, steps.get(0), steps, stepEvery, now, Status.RUNNING, "", thresholds);
    }

    boolean running() {
        return status == Status.RUNNING;
    }

    /** The step after this one; this ramp's percent when it is the last. */
    int nextPercent() {
        int at = steps.indexOf(percent);
        return steps.get(Math.min(at + 1, steps.size() - 1));
    }

    /** Whether the step has run its time (never, with steps by command only). */
    boolean stepDue(Instant now) {
        return !stepEvery.isZero() && !now.isBefore(stepStartedAt.plus(stepEvery));
    }

    /** What a judged tick does to a running ramp. */
    enum Decision {
        /** Too few calls, or the step's time has not run: nothing changes. */
        STAY,
        /** A regression: the current generation takes every key back. */
        ROLL_BACK,
        /** A healthy step whose time has run: the next step. */
        ADVANCE,
        /** A healthy step whose time has run, the next being 100%: the canary becomes the active generation. */
        PROMOTE
    }

    /**
     * The rule of a tick (docs/live-code.md, "The comparison and the rollback"): a regression rolls back at once,
     * whatever the step's time; a step advances only when it was judged healthy (each side has its calls) and its time
     * has run.
     */
    Decision decide(Judge.Judgement judged, Instant now) {
        if (judged.verdict() == Judge.Verdict.REGRESSED) {
            return Decision.ROLL_BACK;
        }
        if (judged.verdict() == Judge.Verdict.HEALTHY && stepDue(now)) {
            return nextPercent() == 100 ? Decision.PROMOTE : Decision.ADVANCE;
        }
        return Decision.STAY;
    }

    Ramp atStep(int next, Instant now) {
        return new Ramp(generation, next, steps, stepEvery, now, status, reason, thresholds);
    }

    Ramp ended(Status end, String why, Instant now) {
        return new Ramp(generation, percent, steps, stepEvery, now, end, why, thresholds);
    }

    void write(Properties properties) {
        properties.setProperty(PREFIX + "generation", Integer.toString(generation));
        properties.setProperty(PREFIX + "percent", Integer.toString(percent));
        properties.setProperty(
                PREFIX + "steps", steps.stream().map(String::valueOf).collect(Collectors.joining(",")));
        properties.setProperty(PREFIX + "stepEvery", stepEvery.toString());
        properties.setProperty(PREFIX + "stepStartedAt", stepStartedAt.toString());
        properties.setProperty(PREFIX + "status", status.name());
        properties.setProperty(PREFIX + "reason", reason);
        properties.setProperty(PREFIX + "minCalls", Integer.toString(thresholds.minCalls()));
        properties.setProperty(PREFIX + "ratePoints", Double.toString(thresholds.ratePoints()));
        properties.setProperty(PREFIX + "rateRatio", Double.toString(thresholds.rateRatio()));
        properties.setProperty(PREFIX + "p99Ratio", Double.toString(thresholds.p99Ratio()));
        properties.setProperty(PREFIX + "p99FloorMillis", Double.toString(thresholds.p99FloorMillis()));
    }

    /**
     * The ramp in a record, every field checked as data first; null when the record has none.
     *
     * @throws IllegalArgumentException naming the first field missing or malformed, and what it must be
     */
    static Ramp read(Properties properties) {
        if (properties.getProperty(PREFIX + "generation") == null) {
            return null;
        }
        int generation = RecordChecks.generation(PREFIX + "generation", properties.getProperty(PREFIX + "generation"));
        int percent = whole(PREFIX + "percent", properties.getProperty(PREFIX + "percent"));
        List<Integer> steps = new ArrayList<>();
        String stepsText = properties.getProperty(PREFIX + "steps", "");
        for (String step : stepsText.split(",", -1)) {
            steps.add(whole(PREFIX + "steps", step));
        }
        Duration stepEvery = duration(PREFIX + "stepEvery", properties.getProperty(PREFIX + "stepEvery"));
        Instant started =
                CodeStore.State.instant(PREFIX + "stepStartedAt", properties.getProperty(PREFIX + "stepStartedAt"));
        Status status = status(properties.getProperty(PREFIX + "status"));
        String reason = properties.getProperty(PREFIX + "reason", "");
        if (reason.length() > MAX_REASON) {
            throw new IllegalArgumentException(
                    PREFIX + "reason must be at most " + MAX_REASON + " characters, was " + reason.length());
        }
        int minCalls = whole(PREFIX + "minCalls", properties.getProperty(PREFIX + "minCalls"));
        double ratePoints = number(PREFIX + "ratePoints", properties.getProperty(PREFIX + "ratePoints"));
        double rateRatio = number(PREFIX + "rateRatio", properties.getProperty(PREFIX + "rateRatio"));
        double p99Ratio = number(PREFIX + "p99Ratio", properties.getProperty(PREFIX + "p99Ratio"));
        double p99Floor = number(PREFIX + "p99FloorMillis", properties.getProperty(PREFIX + "p99FloorMillis"));
        Thresholds thresholds;
        try {
            thresholds = new Thresholds(minCalls, ratePoints, rateRatio, p99Ratio, p99Floor);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("ramp thresholds: " + e.getMessage());
        }
        return new Ramp(generation, percent, steps, stepEvery, started, status, reason, thresholds);
    }

    private static int whole(String field, String value) {
        if (value == null || !value.strip().matches("[0-9]{1,9}")) {
            throw refused(field, value, "must be a whole number");
        }
        return Integer.parseInt(value.strip());
    }

    private static double number(String field, String value) {
        try {
            double parsed = Double.parseDouble(value == null ? "" : value.strip());
            if (!Double.isFinite(parsed)) {
                throw new NumberFormatException();
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw refused(field, value, "must be a number");
        }
    }

    private static Duration duration(String field, String value) {
        try {
            return Duration.parse(value == null ? "" : value);
        } catch (DateTimeParseException e) {
            throw refused(field, value, "must be a duration such as PT60S");
        }
    }

    private static Status status(String value) {
        for (Status status : Status.values()) {
            if (status.name().equals(value)) {
                return status;
            }
        }
        throw refused(PREFIX + "status", value, "must be RUNNING, PROMOTED, ROLLED_BACK or ABORTED");
    }

    private static IllegalArgumentException refused(String field, String value, String expected) {
        return new IllegalArgumentException(field + " " + expected + ", was "
                + (value == null ? "missing" : "'" + UntrustedText.escape(value, 100) + "'"));
    }

    /** "generation 4 on 5% of keys (steps 5,25,100, every 60 s)". */
    String describe() {
        return "generation " + generation + " on " + percent + "% of keys (steps "
                + steps.stream().map(String::valueOf).collect(Collectors.joining(",")) + ", "
                + (stepEvery.isZero() ? "advanced by command" : "every " + stepEvery.toSeconds() + " s") + ")";
    }
}
