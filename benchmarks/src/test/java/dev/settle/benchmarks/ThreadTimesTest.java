package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The harness runs on Linux (its /proc); elsewhere a snapshot is empty and the harness prints no thread. */
class ThreadTimesTest {
    @Test
    void aSpinningThreadIsCountedWithItsShareOfACoreAndTheThreadsComeBusiestFirst() throws Exception {
        // Parentheses and spaces in the name: the kernel's stat line must be read from the name's last ')'.
        // A thread counts while it lives (its /proc entry goes with it): the spinner waits for the second snapshot.
        CountDownLatch spun = new CountDownLatch(1);
        CountDownLatch taken = new CountDownLatch(1);
        Thread spinner = new Thread(
                () -> {
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(600);
                    long spins = 0;
                    while (System.nanoTime() < end) {
                        spins++;
                    }
                    spun.countDown();
                    try {
                        taken.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                "spin (a) 1");
        Map<String, Long> self = Map.of("harness", ProcessHandle.current().pid());
        ThreadTimes.Snapshot before = ThreadTimes.take(self);
        spinner.start();
        spun.await();
        ThreadTimes.Between between = ThreadTimes.between(before, ThreadTimes.take(self));
        taken.countDown();
        spinner.join();

        List<ThreadTimes.Busy> harness = between.busiest().get("harness");
        System.out.println("spinner over 600 ms: " + between.describe(3));
        // Busiest first. On a loaded machine the JIT's compiler threads can outspend the spinner over so short a
        // stretch (a full build's: C2 25%, the spinner 24%), so it is looked up by its name, not taken first.
        assertThat(harness).extracting(ThreadTimes.Busy::coreShare).isSortedAccordingTo(Comparator.reverseOrder());
        ThreadTimes.Busy spinning = harness.stream()
                .filter(thread -> thread.name().equals("spin (a) 1"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no spinner among " + harness));
        // 600 ms of spinning within a stretch a little longer: about one core on a quiet machine, what the scheduler
        // leaves it on a loaded one; never more than one core (ticks counted against the wrong clock would be 100×
        // off), and the machine was at least that busy.
        assertThat(spinning.coreShare()).isGreaterThan(0.0).isLessThanOrEqualTo(1.05);
        assertThat(between.busyCores())
                .isGreaterThanOrEqualTo(spinning.coreShare() - 0.05)
                .isLessThanOrEqualTo(between.cores() + 0.05);
        assertThat(between.describe(3)).startsWith("harness: ").contains("cores busy");
    }

    @Test
    void aProcessThatIsGoneHasNoThreadsAndNothingIsSaidAboutAnEmptySnapshot() {
        assertThat(ThreadTimes.take(Map.of("gone", Long.MAX_VALUE)).threads()).isEmpty();
        assertThat(ThreadTimes.between(ThreadTimes.Snapshot.NONE, ThreadTimes.Snapshot.NONE))
                .isSameAs(ThreadTimes.Between.NONE);
    }
}
