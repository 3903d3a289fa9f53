package dev.settle.runtime.time;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TimeTest {
    @Test
    void manualTimeRunsDueTasksInTheOrderOfTheirTimesAndTiesInTheOrderScheduled() {
        ManualTime time = new ManualTime();
        List<String> ran = new ArrayList<>();
        time.schedule(Duration.ofMillis(30), () -> ran.add("c"));
        time.schedule(Duration.ofMillis(10), () -> ran.add("a"));
        time.schedule(Duration.ofMillis(10), () -> ran.add("b"));

        time.advance(Duration.ofMillis(29));
        assertThat(ran).containsExactly("a", "b");
        time.advance(Duration.ofMillis(1));
        assertThat(ran).containsExactly("a", "b", "c");
        assertThat(time.pending()).isZero();
    }

    @Test
    void aTaskSeesTheClockAtItsOwnTimeAndMaySchedulePastIt() {
        ManualTime time = new ManualTime(0);
        List<Long> seen = new ArrayList<>();
        time.schedule(Duration.ofMillis(10), () -> {
            seen.add(time.nanoTime());
            time.schedule(Duration.ofMillis(10), () -> seen.add(time.nanoTime()));
        });

        time.advance(Duration.ofSeconds(1));

        assertThat(seen).containsExactly(10_000_000L, 20_000_000L);
        assertThat(time.nanoTime()).isEqualTo(1_000_000_000L);
    }

    @Test
    void delaysTooLongForNanosecondsWaitForeverInsteadOfOverflowing() throws Exception {
        assertThat(Time.saturatedNanos(Duration.ofSeconds(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
        assertThat(Time.saturatedNanos(Duration.ofSeconds(-5))).isZero();

        ManualTime manual = new ManualTime(Long.MAX_VALUE - 10);
        List<String> ran = new ArrayList<>();
        manual.schedule(Duration.ofDays(1), () -> ran.add("never"));
        manual.advance(Duration.ofNanos(5));
        assertThat(ran).isEmpty();

        try (SystemTime system = new SystemTime()) {
            CountDownLatch soon = new CountDownLatch(1);
            system.schedule(Duration.ofSeconds(Long.MAX_VALUE), () -> ran.add("never"));
            system.schedule(Duration.ofMillis(1), soon::countDown);
            assertThat(soon.await(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(ran).isEmpty();
    }

    @Test
    void aClosedTimerRefusesNewWaits() {
        ManualTime manual = new ManualTime();
        manual.close();
        assertThatThrownBy(() -> manual.schedule(Duration.ofMillis(1), () -> {}))
                .isInstanceOf(RejectedExecutionException.class);
        SystemTime system = new SystemTime();
        system.close();
        assertThatThrownBy(() -> system.schedule(Duration.ofMillis(1), () -> {}))
                .isInstanceOf(RejectedExecutionException.class);
    }
}
