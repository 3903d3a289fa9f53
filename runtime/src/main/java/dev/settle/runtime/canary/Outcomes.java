package dev.settle.runtime.canary;

import dev.settle.sdk.Outcome;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one generation's calls did over a ramp's step: calls, failures (a throw, a failed stage, a timeout), each
 * outcome counted apart ({@code retry}, {@code retryAfter}, none, {@code drop}: never counted as failures), and the
 * handling time's p99 from a histogram of fixed buckets (a quarter of a power of two each, about 19% wide). Counted
 * without a lock: the calls of many threads add up here, the judge reads a {@link Snapshot} now and then.
 */
public final class Outcomes {
    /** Four buckets per doubling of microseconds, up to about 2^32 us (an hour): the last bucket takes the rest. */
    private static final int BUCKETS = 4 * 32;

    private final LongAdder calls = new LongAdder();
    private final LongAdder failures = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final LongAdder retryAfters = new LongAdder();
    private final LongAdder nones = new LongAdder();
    private final LongAdder drops = new LongAdder();
    private final AtomicLongArray handling = new AtomicLongArray(BUCKETS);

    /** A call that ended with {@code outcome} (null: none) after {@code nanos}. */
    void returned(Outcome outcome, long nanos) {
        calls.increment();
        if (outcome instanceof Outcome.Retry) {
            retries.increment();
        } else if (outcome instanceof Outcome.RetryAfter) {
            retryAfters.increment();
        } else if (outcome instanceof Outcome.Drop) {
            drops.increment();
        } else if (outcome == null) {
            nones.increment();
        }
        handling.incrementAndGet(bucket(nanos));
    }

    /** A call that failed (threw, its stage failed, or it timed out) after {@code nanos}. */
    void failed(long nanos) {
        calls.increment();
        failures.increment();
        handling.incrementAndGet(bucket(nanos));
    }

    /** The counts now. */
    public Snapshot snapshot() {
        long[] counts = new long[BUCKETS];
        for (int i = 0; i < BUCKETS; i++) {
            counts[i] = handling.get(i);
        }
        return new Snapshot(
                calls.sum(),
                failures.sum(),
                retries.sum(),
                retryAfters.sum(),
                nones.sum(),
                drops.sum(),
                p99Millis(counts));
    }

    static int bucket(long nanos) {
        long micros = Math.max(1, nanos / 1_000);
        double quarters = 4 * (Math.log(micros) / Math.log(2));
        return (int) Math.min(BUCKETS - 1, Math.max(0, Math.ceil(quarters)));
    }

    /** The upper bound of bucket {@code index}, in milliseconds. */
    static double upperMillis(int index) {
        return Math.pow(2, index / 4.0) / 1_000.0;
    }

    private static double p99Millis(long[] counts) {
        long total = 0;
        for (long count : counts) {
            total += count;
        }
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(total * 0.99);
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return upperMillis(i);
            }
        }
        return upperMillis(counts.length - 1);
    }

    /**
     * One generation's counts at one moment; each rate is of {@code calls}, 0 with none.
     *
     * @param p99Millis the bucket bound under which 99% of the calls' handling times fell
     */
    public record Snapshot(
            long calls, long failures, long retries, long retryAfters, long nones, long drops, double p99Millis) {
        public static final Snapshot EMPTY = new Snapshot(0, 0, 0, 0, 0, 0, 0);

        public double failureRate() {
            return rate(failures);
        }

        public double retryRate() {
            return rate(retries);
        }

        public double retryAfterRate() {
            return rate(retryAfters);
        }

        public double noneRate() {
            return rate(nones);
        }

        public double dropRate() {
            return rate(drops);
        }

        private double rate(long count) {
            return calls == 0 ? 0 : (double) count / calls;
        }
    }
}
