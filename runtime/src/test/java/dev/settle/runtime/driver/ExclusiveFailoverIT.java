package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.next;
import static dev.settle.runtime.driver.DriverFixture.seen;
import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** On Exclusive and Failover the broker keeps no redelivery count: every attempt is attempt 1. */
@ExtendWith(DriverFixtures.class)
class ExclusiveFailoverIT {

    @ParameterizedTest
    @EnumSource(
            value = SubscriptionKind.class,
            names = {"EXCLUSIVE", "FAILOVER"})
    void aRetriedMessageComesBackWithAttemptStillOne(SubscriptionKind type, DriverFixture pulsar) throws Exception {
        String topic = topic("no-count-" + type.manifestName());
        BlockingQueue<Seen> seen = seen();
        AtomicInteger calls = new AtomicInteger();
        pulsar.start(
                spec(topic, type).build(),
                seen,
                delivery -> calls.incrementAndGet() < 3 ? Outcome.retry() : Outcome.ack(),
                new RecordingMetrics());

        pulsar.send(topic, "again", null, Map.of());

        Seen first = next(seen, Duration.ofSeconds(30));
        Seen second = next(seen, Duration.ofSeconds(10));
        Seen third = next(seen, Duration.ofSeconds(10));
        assertThat(third).isNotNull();
        assertThat(second.messageId()).isEqualTo(first.messageId());
        assertThat(first.attempt()).isEqualTo(1);
        assertThat(second.attempt()).isEqualTo(1);
        assertThat(third.attempt()).isEqualTo(1);
    }
}
