package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.BreakerSettings;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import org.junit.jupiter.api.Test;

class BreakerTest {
    private final ManualTime time = new ManualTime();
    private final List<String> changes = new ArrayList<>();
    private final Breaker breaker = new Breaker(
            BreakerSettings.DEFAULT, time, (from, to, why) -> changes.add(from.label() + " -> " + to.label()));

    @Test
    void opensWhenFiveDistinctKeysFailWithADependencysCauseWithinTheWindow() {
        for (int key = 1; key <= 4; key++) {
            assertThat(breaker.dependencyFailed("k" + key, "java.net.ConnectException"))
                    .isFalse();
            time.advance(Duration.ofMillis(100));
        }
        assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);

        assertThat(breaker.dependencyFailed("k5", "java.net.ConnectException")).isTrue();

        assertThat(breaker.state()).isEqualTo(Breaker.State.OPEN);
        assertThat(changes).containsExactly("closed -> open");
        assertThat(breaker.reason())
                .isEqualTo("5 keys failed with a dependency's cause within 2s (5 of 5 calls), the last with"
                        + " java.net.ConnectException");
    }

    @Test
    void oneKeyFailingOverAndOverNeverOpensIt() {
        for (int i = 0; i < 50; i++) {
            breaker.dependencyFailed("the-same-key", "java.io.IOException");
            time.advance(Duration.ofMillis(10));
        }
        assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);
    }

    @Test
    void failuresThatAreNotMostOfTheCallsInTheWindowDoNotOpenIt() {
        for (int i = 0; i < 6; i++) {
            breaker.succeeded(time.nanoTime());
        }
        for (int key = 1; key <= 5; key++) {
            breaker.dependencyFailed("k" + key, "java.io.IOException");
        }
        assertThat(breaker.state()).as("5 failures of 11 calls").isEqualTo(Breaker.State.CLOSED);

        breaker.dependencyFailed("k6", "java.io.IOException");
        assertThat(breaker.state())
                .as("6 failures of 12 calls is not more than half")
                .isEqualTo(Breaker.State.CLOSED);
        breaker.dependencyFailed("k7", "java.io.IOException");
        assertThat(breaker.state()).as("7 of 13").isEqualTo(Breaker.State.OPEN);
    }

    @Test
    void failuresOlderThanTheWindowAreForgotten() {
        for (int key = 1; key <= 4; key++) {
            breaker.dependencyFailed("k" + key, "java.io.IOException");
        }
        time.advance(Duration.ofMillis(2_001));
        breaker.dependencyFailed("k5", "java.io.IOException");
        assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);
        for (int key = 6; key <= 9; key++) {
            breaker.dependencyFailed("k" + key, "java.io.IOException");
        }
        assertThat(breaker.state()).isEqualTo(Breaker.State.OPEN);
    }

    @Test
    void aSuccessOfACallBegunBeforeItOpenedLeavesItOpenOneBegunSinceClosesIt() {
        // At exactly-once a call's success is settled once its transaction commits, after calls begun later failed.
        long begunBefore = time.nanoTime();
        time.advance(Duration.ofMillis(10));
        open();
        time.advance(Duration.ofMillis(50));

        breaker.succeeded(begunBefore);

        assertThat(breaker.state()).isEqualTo(Breaker.State.OPEN);
        long begunSince = time.nanoTime();
        time.advance(Duration.ofMillis(10));
        breaker.succeeded(begunSince);
        assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);
        assertThat(changes).containsExactly("closed -> open", "open -> closed");
    }

    @Test
    void aProbeMakesItHalfOpenItsFailureOpensItAgainAndASuccessClosesIt() {
        open();
        breaker.probing("message 1:2:-1");
        assertThat(breaker.state()).isEqualTo(Breaker.State.HALF_OPEN);
        breaker.probeFailed("java.net.ConnectException");
        assertThat(breaker.state()).isEqualTo(Breaker.State.OPEN);
        assertThat(breaker.reason()).isEqualTo("the probe failed with java.net.ConnectException");
        breaker.probing("message 1:3:-1");
        breaker.succeeded(time.nanoTime());

        assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);
        assertThat(changes)
                .containsExactly(
                        "closed -> open",
                        "open -> half-open",
                        "half-open -> open",
                        "open -> half-open",
                        "half-open -> closed");
    }

    @Test
    void newCodeClosesItAndANewOutageIsJudgedOnItsOwnFailures() {
        open();
        breaker.close("new code went live");
        assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);
        assertThat(breaker.reason()).isEqualTo("new code went live");

        breaker.dependencyFailed("k1", "java.io.IOException");
        assertThat(breaker.state())
                .as("the keys that opened the last one are forgotten")
                .isEqualTo(Breaker.State.CLOSED);
    }

    @Test
    void atDefaultsItOpensBeforeAMessageFailingWithTheOutagesCauseReachesItsLastAttempt() {
        // 30 msg/s, each a key of its own, healthy for 5 s (the window is full of successes), then the dependency goes
        // down: every attempt fails and comes back after the default backoff (100 ms doubling), 5 attempts at most.
        assertOpensBeforeTheFirstLastAttempt(30);
        assertOpensBeforeTheFirstLastAttempt(1_000);
    }

    private void assertOpensBeforeTheFirstLastAttempt(int perSecond) {
        ManualTime clock = new ManualTime();
        List<Long> opened = new ArrayList<>();
        Breaker fresh = new Breaker(BreakerSettings.DEFAULT, clock, (from, to, why) -> {
            if (to == Breaker.State.OPEN) {
                opened.add(clock.nanoTime());
            }
        });
        long start = clock.nanoTime();
        long outage = start + Duration.ofSeconds(5).toNanos();
        long gap = 1_000_000_000L / perSecond;
        record Attempt(long at, int key, int attempt) {}
        PriorityQueue<Attempt> due = new PriorityQueue<>((a, b) -> Long.compare(a.at(), b.at()));
        for (int key = 0; key < 10 * perSecond; key++) {
            due.add(new Attempt(start + key * gap, key, 1));
        }
        long firstLastAttempt = Long.MAX_VALUE;
        int maxAttempts = 5;
        while (!due.isEmpty() && opened.isEmpty()) {
            Attempt next = due.poll();
            clock.advance(Duration.ofNanos(next.at() - clock.nanoTime()));
            if (next.at() < outage) {
                fresh.succeeded(clock.nanoTime());
                continue;
            }
            if (next.attempt() == maxAttempts) {
                firstLastAttempt = Math.min(firstLastAttempt, next.at());
                break;
            }
            fresh.dependencyFailed("k" + next.key(), "java.net.ConnectException");
            Duration backoff = FailureBackoff.DEFAULT.delayAfter(next.attempt());
            due.add(new Attempt(next.at() + backoff.toNanos(), next.key(), next.attempt() + 1));
        }
        assertThat(opened).as("%d msg/s: the breaker opened", perSecond).hasSize(1);
        assertThat(Duration.ofNanos(opened.get(0) - outage))
                .as(
                        "%d msg/s: opened after the outage began, before any last attempt (%s in)",
                        perSecond, Duration.ofMillis(1_500))
                .isLessThan(Duration.ofMillis(1_500));
    }

    private void open() {
        for (int key = 1; key <= 5; key++) {
            breaker.dependencyFailed("k" + key, "java.io.IOException");
        }
        assertThat(breaker.state()).isEqualTo(Breaker.State.OPEN);
    }
}
