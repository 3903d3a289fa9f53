package dev.settle.testbroker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WaitsTest {
    @Test
    void returnsTheFirstAnswerThatIsDoneAndCountsAThrowingProbeAsNotYet() {
        AtomicInteger looks = new AtomicInteger();

        int answer = Waits.until(
                "three looks",
                Duration.ofSeconds(30),
                () -> {
                    if (looks.incrementAndGet() == 1) {
                        throw new IllegalStateException("not listening yet");
                    }
                    return looks.get();
                },
                n -> n >= 3);

        assertThat(answer).isEqualTo(3);
    }

    @Test
    void failsAfterTheDeadlineSayingWhatItAwaitedAndWhatItLastSaw() {
        assertThatThrownBy(() -> PulsarFixture.await(
                        "a backlog of 0", Duration.ofMillis(200), () -> 7L, backlog -> backlog == 0))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("for a backlog of 0 (the bound: PT0.2S); last seen:")
                .hasMessageEndingWith("7");
    }

    @Test
    void aReportOfWhereThingsStandIsAskedOnceWhenTheWaitFailsAndNeverWhenItSucceeds() {
        AtomicInteger looks = new AtomicInteger();
        AtomicInteger reports = new AtomicInteger();

        Waits.until(
                "the fifth look",
                Duration.ofSeconds(30),
                () -> looks.incrementAndGet() >= 5,
                () -> "report " + reports.incrementAndGet());
        assertThat(reports)
                .as("reports asked of a wait that succeeded at its fifth look")
                .hasValue(0);

        looks.set(0);
        assertThatThrownBy(() -> Waits.until(
                        "what never comes",
                        Duration.ofMillis(300),
                        () -> looks.incrementAndGet() < 0,
                        () -> "report " + reports.incrementAndGet()))
                .isInstanceOf(AssertionError.class)
                .hasMessageEndingWith("report 1");
        assertThat(looks.get()).as("looks in 300 ms").isGreaterThan(3);
        assertThat(reports).as("reports asked of a wait that failed").hasValue(1);
    }

    @Test
    void duringFailsAtTheFirstLookThatBreaksTheInvariantWithWhatItSaw() {
        AtomicInteger looks = new AtomicInteger();

        assertThatThrownBy(() -> Waits.during(
                        "the runtime unready",
                        Duration.ofSeconds(30),
                        () -> looks.incrementAndGet() < 3,
                        () -> "/readyz 200"))
                .isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("the runtime unready stopped holding after")
                .hasMessageEndingWith("/readyz 200");
        assertThat(looks).hasValue(3);
    }

    @Test
    void duringReturnsOnceThePeriodPassedWithTheInvariantHeld() {
        long started = System.nanoTime();

        Waits.during("alive", Duration.ofMillis(300), () -> true, () -> "dead");

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
    }

    @Test
    void aPauseWithoutAReasonIsRefused() {
        assertThatThrownBy(() -> Waits.pause(Duration.ofMillis(1), " "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("says why");
    }
}
