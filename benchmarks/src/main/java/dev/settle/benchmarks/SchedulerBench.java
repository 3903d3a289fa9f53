package dev.settle.benchmarks;

import dev.settle.benchmarks.handlers.Marker;
import dev.settle.runtime.time.SystemTime;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@link SystemTime}, the runtime's one timer, alone, with {@code count} waits at once: the retained heap per held wait and each wait's
 * lateness (when it ran − when it was due). A hand-written harness rather than JMH: what is measured is one
 * timeline (schedule a million waits, measure the heap once, let them fire over ten seconds), not the mean time of
 * a small repeatable operation, so JMH's iterations would only add its own state to the heap being measured. A
 * first, unreported scheduler runs {@code warmUp} waits so that the measured one runs compiled code.
 *
 * <p>Arguments: count, shortest delay ms, longest delay ms, warm-up count. Prints
 * {@code BENCH scheduler-bytes <bytes per wait> <fired before the measurement>} and
 * {@code BENCH scheduler-lateness <p50 ns> <p99 ns> <count>}.
 */
final class SchedulerBench {
    private final long[] due;
    private final long[] lateness;
    private final CountDownLatch fired;

    private SchedulerBench(int count) {
        due = new long[count];
        lateness = new long[count];
        fired = new CountDownLatch(count);
    }

    public static void main(String[] args) throws Exception {
        int count = Integer.parseInt(args[0]);
        long minMillis = Long.parseLong(args[1]);
        long maxMillis = Long.parseLong(args[2]);
        int warmUp = Integer.parseInt(args[3]);

        SchedulerBench warm = new SchedulerBench(warmUp);
        try (SystemTime timer = new SystemTime()) {
            warm.schedule(timer, 0, 500, 1);
            warm.await(Duration.ofSeconds(30));
        }

        SchedulerBench run = new SchedulerBench(count);
        try (SystemTime timer = new SystemTime()) {
            // The timer's thread starts with its first task: start it before the baseline.
            CountDownLatch started = new CountDownLatch(1);
            timer.schedule(Duration.ofNanos(1), started::countDown);
            started.await();
            long before = Heap.usedAfterGc();
            run.schedule(timer, minMillis, maxMillis, 42);
            long after = Heap.usedAfterGc();
            long firedEarly = count - run.fired.getCount();
            Marker.print("scheduler-bytes", (after - before) / count, firedEarly);
            run.await(Duration.ofMillis(maxMillis).plusMinutes(2));
            Marker.print(
                    "scheduler-lateness",
                    Stats.percentile(run.lateness.clone(), 50),
                    Stats.percentile(run.lateness.clone(), 99),
                    count);
        }
        System.exit(0);
    }

    /** Holds every wait, delays uniform in [min, max) ms; each wait captures two values, as Settle's release does. */
    private void schedule(SystemTime timer, long minMillis, long maxMillis, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long spread = TimeUnit.MILLISECONDS.toNanos(maxMillis - minMillis);
        long min = TimeUnit.MILLISECONDS.toNanos(minMillis);
        for (int i = 0; i < due.length; i++) {
            long delay = min + (spread == 0 ? 0 : random.nextLong(spread));
            int index = i;
            due[i] = System.nanoTime() + delay;
            timer.schedule(Duration.ofNanos(delay), () -> fire(index));
        }
    }

    private void fire(int index) {
        lateness[index] = System.nanoTime() - due[index];
        fired.countDown();
    }

    private void await(Duration timeout) throws InterruptedException {
        if (!fired.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(fired.getCount() + " waits never ran within " + timeout);
        }
    }
}
