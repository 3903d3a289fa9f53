package dev.settle.runtime.canary;

/**
 * When a canary is judged and when it has regressed (docs/live-code.md, "The comparison and the rollback"): each side
 * needs {@code minCalls} calls before a step is judged; a rate (failures, and each of {@code retry},
 * {@code retryAfter}, none and {@code drop} on its own) regressed when the canary's is both more than
 * {@code ratePoints} percentage points and more than {@code rateRatio} times the current's; the p99 handling time
 * when it is more than {@code p99Ratio} times the current's and at least {@code p99FloorMillis} more.
 */
public record Thresholds(int minCalls, double ratePoints, double rateRatio, double p99Ratio, double p99FloorMillis) {
    /** 200 calls a side; +5 points and 2x; p99 2x and 50 ms more. */
    public static final Thresholds DEFAULTS = new Thresholds(200, 5, 2, 2, 50);

    public Thresholds {
        if (minCalls < 1) {
            throw new IllegalArgumentException("minCalls must be 1 or more, was " + minCalls);
        }
        if (!(ratePoints >= 0) || !(rateRatio >= 1) || !(p99Ratio >= 1) || !(p99FloorMillis >= 0)) {
            throw new IllegalArgumentException("ratePoints and p99FloorMillis must be 0 or more, rateRatio and p99Ratio"
                    + " 1 or more; were " + ratePoints + ", " + p99FloorMillis + ", " + rateRatio + ", " + p99Ratio);
        }
    }
}
