package dev.settle.benchmarks;

import java.util.Arrays;

/** Order statistics, nearest rank. */
final class Stats {
    private Stats() {}

    /** The {@code p}th percentile (0 < p <= 100) of {@code samples}, which this sorts. */
    static long percentile(long[] samples, double p) {
        if (samples.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        Arrays.sort(samples);
        int rank = (int) Math.ceil(p / 100.0 * samples.length);
        return samples[Math.max(0, Math.min(samples.length, rank) - 1)];
    }

    static double median(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no values");
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
}
