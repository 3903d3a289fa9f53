package dev.settle.runtime.canary;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The comparison of a canary's outcomes with the current generation's over the same window (docs/live-code.md, "The
 * comparison and the rollback"): a pure function of two {@link Outcomes.Snapshot}s and the {@link Thresholds}.
 */
public final class Judge {
    private Judge() {}

    /** What the comparison found. */
    public enum Verdict {
        /** A side has fewer calls than {@link Thresholds#minCalls()}: the step is not judged, and does not advance. */
        NOT_ENOUGH_CALLS,
        /** No rate and no p99 past its threshold. */
        HEALTHY,
        /** At least one past its threshold: the canary is to be rolled back. */
        REGRESSED
    }

    /** The verdict, and why (every threshold passed, or the calls missing), in words for a log and a status. */
    public record Judgement(Verdict verdict, String why) {}

    public static Judgement judge(Outcomes.Snapshot canary, Outcomes.Snapshot current, Thresholds thresholds) {
        if (canary.calls() < thresholds.minCalls() || current.calls() < thresholds.minCalls()) {
            return new Judgement(
                    Verdict.NOT_ENOUGH_CALLS,
                    "not judged yet: " + canary.calls() + " canary and " + current.calls() + " current calls, "
                            + thresholds.minCalls() + " a side needed");
        }
        List<String> past = new ArrayList<>();
        rate("failure rate", canary.failureRate(), current.failureRate(), thresholds, past);
        rate("retry rate", canary.retryRate(), current.retryRate(), thresholds, past);
        rate("retryAfter rate", canary.retryAfterRate(), current.retryAfterRate(), thresholds, past);
        rate("no-outcome rate", canary.noneRate(), current.noneRate(), thresholds, past);
        rate("drop rate", canary.dropRate(), current.dropRate(), thresholds, past);
        if (canary.p99Millis() > thresholds.p99Ratio() * current.p99Millis()
                && canary.p99Millis() - current.p99Millis() >= thresholds.p99FloorMillis()) {
            past.add(String.format(
                    Locale.ROOT,
                    "p99 handling time %.1f ms against %.1f ms (more than %sx and %s ms more)",
                    canary.p99Millis(),
                    current.p99Millis(),
                    plain(thresholds.p99Ratio()),
                    plain(thresholds.p99FloorMillis())));
        }
        String counted = " over " + canary.calls() + " canary and " + current.calls() + " current calls";
        return past.isEmpty()
                ? new Judgement(Verdict.HEALTHY, "no regression" + counted)
                : new Judgement(Verdict.REGRESSED, String.join("; ", past) + counted);
    }

    private static void rate(String name, double canary, double current, Thresholds thresholds, List<String> past) {
        if (canary > current + thresholds.ratePoints() / 100 && canary > thresholds.rateRatio() * current) {
            past.add(String.format(
                    Locale.ROOT,
                    "%s %.1f%% against %.1f%% (more than %s points and %sx)",
                    name,
                    100 * canary,
                    100 * current,
                    plain(thresholds.ratePoints()),
                    plain(thresholds.rateRatio())));
        }
    }

    private static String plain(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }
}
