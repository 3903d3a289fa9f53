package dev.settle.benchmarks;

import java.time.Duration;

/**
 * How much each measurement does. {@link #FULL} is what docs/benchmarks.md reports (under 10 minutes on two
 * cores); {@link #SMOKE} only proves, in {@code ./mvnw verify}, that every measurement still produces a number.
 *
 * @param name printed with the table
 * @param noOpWarmUp the first messages of each no-op run, handled before the measured ones (the JIT's warm-up)
 * @param noOpMessages the measured messages of each no-op run (100-byte messages; the backlog holds both)
 * @param rounds no-op and start-up runs per consumer; the table reports the median
 * @param warmUpMessages a first, unreported round that warms the broker (the first round is 2-5x slower)
 * @param ioMessages messages for the I/O-bound handler at concurrency 1, 8 and 64 (a few seconds each)
 * @param retries retry-latency samples: one message retried this many times in a row
 * @param held messages held at once through the broker
 * @param holdFor their retryAfter delay; long enough for all to be held before the first comes back
 * @param scheduled tasks held at once in the scheduler micro-benchmark
 * @param scheduledMin the shortest of their delays; longer than scheduling them all and measuring the heap
 * @param scheduledMax the longest
 * @param schedulerWarmUp tasks run through a first, unreported scheduler before the measured one
 * @param only the one measurement to run (noop, io, function, retry, held, scheduler, start, memory), or null for all
 *     but memory
 */
record Sizes(
        String name,
        int noOpWarmUp,
        int noOpMessages,
        int rounds,
        int warmUpMessages,
        int[] ioMessages,
        int retries,
        int held,
        Duration holdFor,
        int scheduled,
        Duration scheduledMin,
        Duration scheduledMax,
        int schedulerWarmUp,
        String only) {

    static final int[] CONCURRENCY = {1, 8, 64};

    static final Sizes FULL = new Sizes(
            "full",
            100_000,
            200_000,
            3,
            20_000,
            new int[] {1_000, 6_000, 40_000},
            1_000,
            10_000,
            Duration.ofSeconds(10),
            1_000_000,
            Duration.ofSeconds(5),
            Duration.ofSeconds(15),
            200_000,
            null);

    static final Sizes SMOKE = new Sizes(
            "smoke",
            100,
            500,
            1,
            0,
            new int[] {50, 200, 1_000},
            100,
            1_000,
            Duration.ofSeconds(3),
            10_000,
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            5_000,
            null);

    /** These sizes for one measurement only: for looking into one figure, never for the reported table. */
    Sizes only(String measurement) {
        return new Sizes(
                name + ", only " + measurement,
                noOpWarmUp,
                noOpMessages,
                rounds,
                warmUpMessages,
                ioMessages,
                retries,
                held,
                holdFor,
                scheduled,
                scheduledMin,
                scheduledMax,
                schedulerWarmUp,
                measurement);
    }

    boolean runs(String measurement) {
        return only == null || only.equals(measurement);
    }

    /**
     * Whether the memory run goes: only when asked for ({@code --only memory}), as it takes five minutes by itself
     * (one in smoke mode); the full table and {@code ./mvnw verify} leave it out.
     */
    boolean runsMemory() {
        return "memory".equals(only);
    }

    /** How long the memory run keeps 1 KiB outputs pending. */
    Duration memoryRun() {
        return name.startsWith("smoke") ? Duration.ofMinutes(1) : Duration.ofMinutes(5);
    }
}
