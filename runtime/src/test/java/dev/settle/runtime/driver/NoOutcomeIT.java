package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.next;
import static dev.settle.runtime.driver.DriverFixture.seen;
import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A handler that returns {@code null}: the message stays unacknowledged. */
@ExtendWith(DriverFixtures.class)
class NoOutcomeIT {
    private final RecordingMetrics metrics = new RecordingMetrics();

    @Test
    void noOutcomeComesBackAfterTheAckTimeoutAndNotBefore(DriverFixture pulsar) throws Exception {
        String topic = topic("none-timeout");
        BlockingQueue<Seen> seen = seen();
        pulsar.start(
                spec(topic, SubscriptionKind.SHARED)
                        .ackTimeout(Duration.ofSeconds(2))
                        .build(),
                seen,
                delivery -> delivery.attempt() == 1 ? null : Outcome.ack(),
                metrics);

        pulsar.send(topic, "forgotten", null, Map.of());

        Seen first = next(seen, Duration.ofSeconds(30));
        Seen second = next(seen, Duration.ofSeconds(10));
        assertThat(second).isNotNull();
        double seconds = (second.atNanos() - first.atNanos()) / 1e9;
        System.out.printf("no outcome, ack timeout 2 s: back after %.2f s%n", seconds);
        // Back once the timeout passes, within one tick (1 s by default) of it.
        assertThat(seconds).isBetween(2.0, 5.0);
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(metrics.count(Settled.NONE)).isEqualTo(1);
    }

    @Test
    void withoutAnAckTimeoutNoOutcomeStaysOutEvenWithACapUntilTheConsumerDisconnects(DriverFixture pulsar)
            throws Exception {
        // Two subscriptions on one topic, watched over the same 35 s: one plain, one with a dead-letter cap (the
        // case where clients before Pulsar 3.0 silently turned on a 30 s ack timeout).
        String topic = topic("none-forever");
        BlockingQueue<Seen> plainSeen = seen();
        BlockingQueue<Seen> cappedSeen = seen();
        SubscriptionSpec plain = spec(topic, SubscriptionKind.SHARED).build();
        SubscriptionSpec capped = spec(topic, SubscriptionKind.SHARED)
                .name("capped")
                .deadLetter(3, topic + "-dlq")
                .build();
        SubscriptionDriver plainDriver = pulsar.start(plain, plainSeen, delivery -> null, metrics);
        SubscriptionDriver cappedDriver = pulsar.start(capped, cappedSeen, delivery -> null, new RecordingMetrics());

        pulsar.send(topic, "left-out", null, Map.of());
        Seen plainFirst = next(plainSeen, Duration.ofSeconds(30));
        Seen cappedFirst = next(cappedSeen, Duration.ofSeconds(30));
        assertThat(plainFirst).isNotNull();
        assertThat(cappedFirst).isNotNull();

        assertThat(next(plainSeen, Duration.ofSeconds(35)))
                .as("back without an ack timeout")
                .isNull();
        assertThat(next(cappedSeen, Duration.ZERO))
                .as("back with a cap and no ack timeout")
                .isNull();

        pulsar.stop(plainDriver);
        pulsar.stop(cappedDriver);
        pulsar.start(plain, plainSeen, delivery -> Outcome.ack(), metrics);
        pulsar.start(capped, cappedSeen, delivery -> Outcome.ack(), new RecordingMetrics());
        Seen plainAgain = next(plainSeen, Duration.ofSeconds(20));
        Seen cappedAgain = next(cappedSeen, Duration.ofSeconds(20));
        assertThat(plainAgain).as("back after the disconnect").isNotNull();
        assertThat(cappedAgain).as("back after the disconnect, capped").isNotNull();
        assertThat(plainAgain.messageId()).isEqualTo(plainFirst.messageId());
        // A disconnect does not raise the redelivery count.
        assertThat(plainAgain.attempt()).isEqualTo(1);
        assertThat(cappedAgain.attempt()).isEqualTo(1);
    }
}
