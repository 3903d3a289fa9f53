package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What a swap past its grace waits for: the calls that may still run on the old port, on a clock the test moves. */
class RunningCallsTest {
    private final ManualTime time = new ManualTime();
    private final RunningCalls calls = new RunningCalls(2, time);

    private boolean noneStartedBy(long nanos) throws InterruptedException {
        return calls.awaitNoneStartedBy(nanos, Duration.ZERO);
    }

    @Test
    void aCallStartedBeforeTheSwitchIsWaitedForUntilItReturnsAndOneStartedAfterIsNot() throws Exception {
        calls.slot(0).calling(time.nanoTime());
        time.advance(Duration.ofMillis(5));
        long switched = time.nanoTime();
        time.advance(Duration.ofMillis(1));
        calls.slot(1).calling(time.nanoTime());

        CompletableFuture<Boolean> waited = CompletableFuture.supplyAsync(() -> {
            try {
                return calls.awaitNoneStartedBy(switched, Duration.ofSeconds(1));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (time.waiting() == 0) {
            assertThat(System.nanoTime()).isLessThan(deadline);
            Thread.onSpinWait();
        }
        time.advance(Duration.ofSeconds(1));
        assertThat(waited.get(10, TimeUnit.SECONDS)).isFalse();

        calls.slot(0).returned();
        assertThat(noneStartedBy(switched)).isTrue();
        assertThat(noneStartedBy(time.nanoTime())).isFalse();
    }

    @Test
    void anOutcomeStillPendingKeepsItsCallInSightUntilItCompletes() throws Exception {
        long started = time.nanoTime();
        InFlight delivery = new InFlight(null, null, null, started, () -> {}, how -> {}, InFlight.Deadline.never(time));
        calls.slot(0).calling(started);
        calls.slot(0).pending(delivery);
        calls.slot(0).returned();
        time.advance(Duration.ofMillis(7));

        assertThat(noneStartedBy(time.nanoTime())).isFalse();
        assertThat(calls.longest()).isEqualTo(Duration.ofMillis(7));

        calls.slot(0).completed(delivery);
        assertThat(noneStartedBy(time.nanoTime())).isTrue();
        assertThat(calls.longest()).isZero();
    }

    @Test
    void theLongestCallIsMeasuredFromItsStart() {
        calls.slot(0).calling(time.nanoTime());
        time.advance(Duration.ofMillis(3));
        calls.slot(1).calling(time.nanoTime());
        time.advance(Duration.ofMillis(2));
        assertThat(calls.longest()).isEqualTo(Duration.ofMillis(5));
        calls.slot(0).returned();
        assertThat(calls.longest()).isEqualTo(Duration.ofMillis(2));
    }
}
