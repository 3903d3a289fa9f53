package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.next;
import static dev.settle.runtime.driver.DriverFixture.seen;
import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/** A handler that throws gets its message back after a backoff that grows, then the dead letters. */
@ExtendWith(DriverFixtures.class)
@Tag("alone") // runs in the runtime-it-alone module
@Isolated("it asserts the gaps between attempts to tens of milliseconds")
class FailureBackoffIT {

    private static List<Seen> attempts(BlockingQueue<Seen> seen) throws InterruptedException {
        List<Seen> attempts = new ArrayList<>();
        for (Seen delivery = next(seen, Duration.ofSeconds(30));
                delivery != null;
                delivery = next(seen, Duration.ofSeconds(3))) {
            attempts.add(delivery);
        }
        return attempts;
    }

    private static List<Long> gapsMillis(List<Seen> attempts) {
        List<Long> gaps = new ArrayList<>();
        for (int i = 1; i < attempts.size(); i++) {
            gaps.add(Duration.ofNanos(
                            attempts.get(i).atNanos() - attempts.get(i - 1).atNanos())
                    .toMillis());
        }
        return gaps;
    }

    @Test
    void aThrowingHandlerIsRetriedAfter100Then200Then400Then800MillisThenDeadLettered(DriverFixture pulsar)
            throws Exception {
        String topic = topic("backoff");
        String deadLetters = topic + "-dlq";
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(5, deadLetters)
                .failureBackoff(Optional.of(new FailureBackoff(Duration.ofMillis(100), 2, Duration.ofSeconds(30))))
                .build();
        pulsar.start(
                spec,
                seen,
                delivery -> {
                    throw new IllegalStateException("downstream is down");
                },
                new RecordingMetrics());

        pulsar.send(topic, "poison", "key-1", Map.of());
        List<Seen> attempts = attempts(seen);

        assertThat(attempts).extracting(Seen::attempt).containsExactly(1, 2, 3, 4, 5);
        List<Long> gaps = gapsMillis(attempts);
        long[] expected = {100, 200, 400, 800};
        for (int i = 0; i < expected.length; i++) {
            // At least half the wait; at most twice it and 300 ms of lateness, which is 3x
            // the most a loaded build was seen to add to a retry's gap (120 ms).
            assertThat(gaps.get(i)).as("gap %d of %s", i + 1, gaps).isBetween(expected[i] / 2, expected[i] * 2 + 300);
        }
        assertThat(pulsar.readAll(deadLetters, 1, Duration.ofSeconds(20))).hasSize(1);
        System.out.println("failure backoff gaps (ms): " + gaps);
    }

    @Test
    void withFailureBackoffNoneAThrowingHandlerIsRetriedAtOnce(DriverFixture pulsar) throws Exception {
        String topic = topic("no-backoff");
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(5, topic + "-dlq")
                .failureBackoff(Optional.empty())
                .build();
        pulsar.start(
                spec,
                seen,
                delivery -> {
                    throw new IllegalStateException("always fails");
                },
                new RecordingMetrics());

        pulsar.send(topic, "poison", null, Map.of());
        List<Seen> attempts = attempts(seen);

        assertThat(attempts).extracting(Seen::attempt).containsExactly(1, 2, 3, 4, 5);
        List<Long> gaps = gapsMillis(attempts);
        // The default backoff waits 100, 200, 400 and 800 ms: at least 750 ms in all, as the test above bounds each
        // gap at half its wait or more. Without one, a full build measured 236 ms in all at most (58, 24, 34, 120).
        assertThat(gaps.stream().mapToLong(Long::longValue).sum())
                .as("the four gaps %s, in all", gaps)
                .isLessThan(750);
        System.out.println("no failure backoff, gaps (ms): " + gaps);
    }

    @Test
    void aBackoffLongerThanTheAckTimeoutEndsJustBeforeItSoEachAttemptComesBackOnce(DriverFixture pulsar)
            throws Exception {
        // The backoff asks for 5 s, the ack timeout is 1 s: the wait must end 50 ms before the client's ack timeout
        // would bring the message back by itself. A wait that outlived it would negatively acknowledge a copy the
        // broker had already redelivered, so one failure would come back twice.
        String topic = topic("backoff-ack-timeout");
        String deadLetters = topic + "-dlq";
        BlockingQueue<Seen> seen = seen();
        RecordingMetrics metrics = new RecordingMetrics();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .ackTimeout(Duration.ofSeconds(1))
                .deadLetter(4, deadLetters)
                .failureBackoff(Optional.of(new FailureBackoff(Duration.ofSeconds(5), 1, Duration.ofSeconds(5))))
                .build();
        pulsar.start(
                spec,
                seen,
                delivery -> {
                    throw new IllegalStateException("downstream is down");
                },
                metrics);

        pulsar.send(topic, "poison", "key-1", Map.of());
        List<Seen> attempts = new ArrayList<>();
        // 8 s after the last copy, well past the 5 s that an uncapped wait would have held one.
        for (Seen delivery = next(seen, Duration.ofSeconds(30));
                delivery != null;
                delivery = next(seen, Duration.ofSeconds(8))) {
            attempts.add(delivery);
        }

        assertThat(attempts).extracting(Seen::attempt).containsExactly(1, 2, 3, 4);
        List<Long> gaps = gapsMillis(attempts);
        assertThat(gaps).allSatisfy(gap -> assertThat(gap).isBetween(700L, 1_600L));
        assertThat(pulsar.readAll(deadLetters, 1, Duration.ofSeconds(20))).hasSize(1);
        assertThat(metrics.held.get()).as("waits still held").isZero();
        System.out.println("failure backoff capped by a 1 s ack timeout, gaps (ms): " + gaps);
    }
}
