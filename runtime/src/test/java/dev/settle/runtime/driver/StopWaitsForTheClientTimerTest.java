package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.shade.io.netty.util.HashedWheelTimer;
import org.apache.pulsar.shade.io.netty.util.Timeout;
import org.apache.pulsar.shade.io.netty.util.Timer;
import org.apache.pulsar.shade.io.netty.util.TimerTask;
import org.junit.jupiter.api.Test;

/**
 * The wait a stop makes before it closes the consumer ({@code SubscriptionDriver.awaitTimerRounds}): every task the
 * client's timer had due when the stop began (a negative acknowledgement's redelivery), and what those tasks scheduled
 * at once, has run when it returns, so that no redelivery runs inside the consumer's close (docs/pulsar-client-notes.md).
 */
class StopWaitsForTheClientTimerTest {
    @Test
    void everyTaskDueBeforeTheStopAndWhatItScheduledHasRunWhenTheWaitReturns() {
        // A wheel of the kind a client makes for itself, its tick 10 ms: a task due now runs up to a tick later.
        HashedWheelTimer timer = new HashedWheelTimer(10, TimeUnit.MILLISECONDS);
        try {
            for (int stop = 0; stop < 20; stop++) {
                AtomicBoolean redelivered = new AtomicBoolean();
                AtomicBoolean followUp = new AtomicBoolean();
                // A retry negatively acknowledged just before the stop: its redelivery due at once; when it runs, it
                // schedules one more at once (a nack sent by a held wait that ended as the stop abandoned it).
                timer.newTimeout(
                        due -> {
                            redelivered.set(true);
                            timer.newTimeout(next -> followUp.set(true), 0, TimeUnit.MILLISECONDS);
                        },
                        0,
                        TimeUnit.MILLISECONDS);

                assertThat(SubscriptionDriver.awaitTimerRounds(timer, 2, Duration.ofSeconds(10)))
                        .isTrue();

                assertThat(redelivered)
                        .as("stop %d: the redelivery due before it", stop)
                        .isTrue();
                assertThat(followUp)
                        .as("stop %d: what the redelivery scheduled", stop)
                        .isTrue();
            }
        } finally {
            timer.stop();
        }
    }

    @Test
    void aTimerThatRunsNothingHoldsTheStopForTheBoundOnlyAndAStoppedOneNotAtAll() {
        Timer silent = new Timer() {
            @Override
            public Timeout newTimeout(TimerTask task, long delay, TimeUnit unit) {
                return null;
            }

            @Override
            public Set<Timeout> stop() {
                return Set.of();
            }
        };
        long started = System.nanoTime();
        assertThat(SubscriptionDriver.awaitTimerRounds(silent, 2, Duration.ofMillis(200)))
                .isFalse();
        long waitedMillis = (System.nanoTime() - started) / 1_000_000;
        // One round's bound, not two: a timer that did not run the first task is not asked again.
        assertThat(waitedMillis).isBetween(200L, 5_000L);

        HashedWheelTimer stopped = new HashedWheelTimer();
        stopped.stop();
        started = System.nanoTime();
        assertThat(SubscriptionDriver.awaitTimerRounds(stopped, 2, Duration.ofSeconds(10)))
                .isFalse();
        assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(5_000L);
    }
}
