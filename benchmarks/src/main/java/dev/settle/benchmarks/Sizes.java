package dev.settle.benchmarks;

import java.time.Duration;

/**
 * How much each measurement does. {@link #FULL} is the protocol docs/benchmarks.md reports (about 40-60 minutes on
 * two cores): five rounds, and every drain at least ten seconds after its warm-up. {@link #QUICK} is the same protocol
 * shorter (three rounds of drains of a few seconds, the message-path rows only, under ten minutes): a change's before
 * and after. {@link #SMOKE} only proves, in {@code ./mvnw verify -Preliability}, that every measurement still produces a
 * number.
 *
 * @param name printed with the table
 * @param rounds rounds of every comparison: each contender runs once per round, each going first in turn; the table
 *     reports the median and the spread
 * @param steady the least a measured drain should last after its warm-up; a run that measured less is named in a note
 *     (drain rates differ by machine, the counts below are fixed)
 * @param messagePathOnly whether only the drains of the message path run (noop, function, exactly) unless one
 *     measurement is asked for
 * @param warmUpMessages a first, unreported round that warms the broker (the first round is 2-5x slower)
 * @param batched the no-op drain of a batched backlog (100-byte messages), also the tracing rows'
 * @param unbatched the no-op drain of an unbatched backlog
 * @param function the identity function with an output, also the exactly-once rows' at-least-once contender
 * @param exactly the identity function at exactly-once with commit batching (about half the at-least-once rate)
 * @param exactlyOne the identity function at exactly-once, one transaction per delivery (about a tenth)
 * @param exactlyPaced the identity function at exactly-once with commit batching, fed at 1 000 msg/s: its commit
 *     latency
 * @param io the I/O-bound handler at concurrency 1, 8 and 64
 * @param latencyMessages inputs of the 10 msg/s latency rows
 * @param retries retry-latency samples: one message retried this many times in a row
 * @param held messages held at once through the broker
 * @param holdFor their retryAfter delay; long enough for all to be held before the first comes back
 * @param scheduled tasks held at once in the scheduler micro-benchmark
 * @param scheduledMin the shortest of their delays; longer than scheduling them all and measuring the heap
 * @param scheduledMax the longest
 * @param schedulerWarmUp tasks run through a first, unreported scheduler before the measured one
 * @param keyhold the key-hold runs' messages, published at 5 000 msg/s: the warm-up's latencies are not reported
 * @param keyholdDelay the failing message's retryAfter delay (twice); the issue's is 5 s
 * @param perMessage the handler of one message that sleeps 5 ms a call, at concurrency 8, beside {@code bulk}
 * @param bulk the batch handler whose bulk call sleeps 5 ms however many messages it holds, at concurrency 8
 * @param outage the breaker runs' messages, their pace, and when and how long their handler's dependency is down
 */
record Sizes(
        String name,
        int rounds,
        Duration steady,
        boolean messagePathOnly,
        int warmUpMessages,
        Drain batched,
        Drain unbatched,
        Drain function,
        Drain exactly,
        Drain exactlyOne,
        Drain exactlyPaced,
        Drain[] io,
        int latencyMessages,
        int retries,
        int held,
        Duration holdFor,
        int scheduled,
        Duration scheduledMin,
        Duration scheduledMax,
        int schedulerWarmUp,
        Drain keyhold,
        Duration keyholdDelay,
        Drain perMessage,
        Drain bulk,
        Outage outage) {

    static final int[] CONCURRENCY = {1, 8, 64};

    /**
     * One drain of a backlog: {@code warmUp} messages handled first and not measured (the JIT compiles the message
     * path meanwhile: in a consumer's first seconds its compiler threads spend more CPU than the message path), then
     * {@code messages} measured.
     */
    record Drain(int warmUp, int messages) {
        int total() {
            return warmUp + messages;
        }
    }

    /**
     * The breaker runs (issue 45): {@code messages} published at {@code perSecond}, the handler's dependency down from
     * {@code downAt} (after the first message is sent) for {@code down}. The publisher should be done before the
     * dependency is back, so that the time from its return to an empty backlog measures the drain alone.
     */
    record Outage(int messages, int perSecond, Duration downAt, Duration down) {
        /** Longer than the default failure backoff's first four waits (1.5 s), so the poison message is settled. */
        int poisonIndex() {
            return perSecond / 5;
        }
    }

    /** The issue's numbers: 20 000 messages at 1 000 msg/s, the dependency down for 60 s from the fifth second. */
    static final Outage ISSUE_45 = new Outage(20_000, 1_000, Duration.ofSeconds(5), Duration.ofSeconds(60));

    /**
     * Counts for at least 10 s of measured drain at the rates of a quiet 2-core machine (issue 51): batched up to
     * 440 000 msg/s, unbatched 20-26 000, a function with an output 9-28 000, exactly-once with commit batching
     * 4 000-21 000 and one transaction per delivery about 600 (the full protocol of 2026-12-05: the fastest runs).
     */
    static final Sizes FULL = new Sizes(
            "full",
            5,
            Duration.ofSeconds(10),
            false,
            20_000,
            new Drain(500_000, 5_500_000),
            new Drain(100_000, 350_000),
            new Drain(30_000, 300_000),
            new Drain(10_000, 230_000),
            new Drain(1_000, 7_000),
            new Drain(3_000, 15_000),
            new Drain[] {new Drain(200, 2_000), new Drain(1_500, 16_500), new Drain(12_000, 132_000)},
            400,
            1_000,
            10_000,
            Duration.ofSeconds(10),
            1_000_000,
            Duration.ofSeconds(5),
            Duration.ofSeconds(15),
            200_000,
            new Drain(25_000, 150_000),
            Duration.ofSeconds(5),
            // 1 600 msg/s at most (8 calls of 5 ms at once), measured 1 100-1 500; batches of 100 measured
            // 75 000-107 000 msg/s on a loaded machine (160 000 at most).
            new Drain(1_500, 16_000),
            new Drain(100_000, 1_500_000),
            ISSUE_45);

    /** The same protocol, shorter: three rounds of drains of 3-5 s, the message-path rows only. */
    static final Sizes QUICK = new Sizes(
            "quick",
            3,
            Duration.ofSeconds(3),
            true,
            20_000,
            new Drain(200_000, 1_500_000),
            new Drain(30_000, 100_000),
            // A quiet run drained the function at up to 36 000 msg/s and exactly-once at up to 15 000: 60 000 and
            // 25 000 measured 1.5-2 s, under the quick mode's 3 s.
            new Drain(10_000, 150_000),
            new Drain(3_000, 60_000),
            new Drain(300, 2_000),
            new Drain(2_000, 6_000),
            new Drain[] {new Drain(50, 600), new Drain(500, 5_000), new Drain(4_000, 40_000)},
            100,
            1_000,
            10_000,
            Duration.ofSeconds(10),
            1_000_000,
            Duration.ofSeconds(5),
            Duration.ofSeconds(15),
            200_000,
            new Drain(10_000, 50_000),
            Duration.ofSeconds(5),
            new Drain(500, 5_000),
            new Drain(30_000, 300_000),
            ISSUE_45);

    /** At least 500 messages a drain, so that even a smoke run's broker CPU spans several ticks of its 10 ms clock. */
    static final Sizes SMOKE = new Sizes(
            "smoke",
            1,
            Duration.ZERO,
            false,
            0,
            new Drain(100, 500),
            new Drain(100, 500),
            new Drain(100, 500),
            new Drain(100, 500),
            new Drain(100, 500),
            new Drain(100, 500),
            new Drain[] {new Drain(0, 50), new Drain(0, 200), new Drain(0, 1_000)},
            20,
            100,
            1_000,
            Duration.ofSeconds(3),
            10_000,
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            5_000,
            // 2 500 measured: the failing key has two messages after its first measured one, which fails.
            new Drain(500, 2_500),
            Duration.ofSeconds(1),
            new Drain(0, 200),
            new Drain(100, 1_000),
            // 8 s down: the messages failing then spend their five attempts (1.5 s of backoff) without the breaker,
            // so both contenders' rows have numbers; the publisher ends at 4 s, before the return at 10 s. With 3 s
            // down, a consumer seconds behind its backlog on a loaded machine (a build beside it) met the outage with
            // no message at its fifth attempt: no dead letter without the breaker, no number for that row.
            new Outage(800, 200, Duration.ofSeconds(2), Duration.ofSeconds(8)));

    /** How long the memory run keeps 1 KiB outputs pending. */
    Duration memoryRun() {
        return name.equals("smoke") ? Duration.ofMinutes(1) : Duration.ofMinutes(5);
    }
}
