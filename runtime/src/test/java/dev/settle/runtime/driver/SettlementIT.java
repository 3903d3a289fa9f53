package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.next;
import static dev.settle.runtime.driver.DriverFixture.seen;
import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The settlement contract (docs/design.md, section 1), row by row, on a real broker; retry's latency is
 * {@link RetryLatencyIT}'s, which runs alone.
 */
@ExtendWith(DriverFixtures.class)
class SettlementIT {
    private final RecordingMetrics metrics = new RecordingMetrics();

    @Test
    void ackedMessageNeverComesBackEvenPastTheAckTimeout(DriverFixture pulsar) throws Exception {
        String topic = topic("ack");
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .ackTimeout(Duration.ofSeconds(2))
                .build();
        pulsar.start(spec, seen, delivery -> Outcome.ack(), metrics);

        pulsar.send(topic, "order-1", null, Map.of());

        assertThat(next(seen, Duration.ofSeconds(30)).attempt()).isEqualTo(1);
        assertThat(next(seen, Duration.ofSeconds(4)))
                .as("delivered again after the 2 s ack timeout")
                .isNull();
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
        assertThat(metrics.count(Settled.ACK)).isEqualTo(1);
    }

    @Test
    void dropAcknowledgesAndIsCountedAsDropNotAck(DriverFixture pulsar) throws Exception {
        String topic = topic("drop");
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .ackTimeout(Duration.ofSeconds(1))
                .build();
        pulsar.start(spec, seen, delivery -> Outcome.drop(), metrics);

        pulsar.send(topic, "malformed", null, Map.of());

        assertThat(next(seen, Duration.ofSeconds(30))).isNotNull();
        assertThat(next(seen, Duration.ofSeconds(3)))
                .as("a dropped message coming back")
                .isNull();
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
        assertThat(metrics.count(Settled.DROP)).isEqualTo(1);
        assertThat(metrics.count(Settled.ACK)).isZero();
    }

    @Test
    void aHandlerThatThrowsIsRetriedAtOnceAndCountedAsError(DriverFixture pulsar) throws Exception {
        String topic = topic("throws");
        BlockingQueue<Seen> seen = seen();
        pulsar.start(
                spec(topic, SubscriptionKind.SHARED).build(),
                seen,
                delivery -> {
                    if (delivery.attempt() == 1) {
                        throw new IllegalStateException("simulated failure");
                    }
                    return Outcome.ack();
                },
                metrics);

        pulsar.send(topic, "order-3", null, Map.of());

        Seen first = next(seen, Duration.ofSeconds(30));
        Seen second = next(seen, Duration.ofSeconds(5));
        assertThat(second).as("redelivered after the exception").isNotNull();
        assertThat(second.messageId()).isEqualTo(first.messageId());
        assertThat(second.attempt()).isEqualTo(2);
        assertThat((second.atNanos() - first.atNanos()) / 1e6)
                .as("ms until back")
                .isLessThan(1000);
        // Counted once each settlement is applied, just after the call that the queue saw start.
        await().atMost(Duration.ofSeconds(10)).until(() -> metrics.count(Settled.ACK) == 1);
        assertThat(metrics.count(Settled.ERROR)).isEqualTo(1);
    }

    @Test
    void retryAfterNotShorterThanTheAckTimeoutIsRefusedAndRetriedAtOnce(DriverFixture pulsar) throws Exception {
        String topic = topic("refused");
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .ackTimeout(Duration.ofSeconds(2))
                .build();
        pulsar.start(
                spec,
                seen,
                delivery -> delivery.attempt() == 1 ? Outcome.retryAfter(Duration.ofSeconds(5)) : Outcome.ack(),
                metrics);

        pulsar.send(topic, "order-4", null, Map.of());

        Seen first = next(seen, Duration.ofSeconds(30));
        Seen second = next(seen, Duration.ofSeconds(5));
        assertThat(second).as("nothing lost: back after the refusal").isNotNull();
        assertThat(second.messageId()).isEqualTo(first.messageId());
        assertThat(second.attempt()).isEqualTo(2);
        assertThat((second.atNanos() - first.atNanos()) / 1e6)
                .as("ms until back")
                .isLessThan(1000);
        assertThat(metrics.count(Settled.REFUSED)).isEqualTo(1);
        assertThat(metrics.count(Settled.RETRY_AFTER)).isZero();
        assertThat(metrics.held.get()).isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
    }
}
