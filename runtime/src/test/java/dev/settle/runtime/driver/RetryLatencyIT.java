package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.next;
import static dev.settle.runtime.driver.DriverFixture.seen;
import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * retry() means at once (docs/design.md, section 1.2): the same message back with its count plus one, in
 * milliseconds. A class of its own so that only this measurement runs alone; {@link SettlementIT}'s other rows run
 * beside the build's other classes.
 */
@ExtendWith(DriverFixtures.class)
@Tag("alone") // runs in the runtime-it-alone module
@Isolated("it asserts a median retry latency under 50 ms")
class RetryLatencyIT {
    private final RecordingMetrics metrics = new RecordingMetrics();

    @Test
    void retryRedeliversTheSameMessageWithCountPlusOneWithinMilliseconds(DriverFixture pulsar) throws Exception {
        String topic = topic("retry");
        BlockingQueue<Seen> seen = seen();
        int retries = 20;
        List<Long> returnedAt = new ArrayList<>();
        pulsar.start(
                spec(topic, SubscriptionKind.SHARED).build(),
                seen,
                delivery -> {
                    if (delivery.attempt() <= retries) {
                        returnedAt.add(System.nanoTime());
                        return Outcome.retry();
                    }
                    return Outcome.ack();
                },
                metrics);

        String id =
                pulsar.send(topic, "order-2", "k-2", Map.of("origin", "test")).toString();

        List<Seen> deliveries = new ArrayList<>();
        for (int i = 0; i <= retries; i++) {
            Seen delivery = next(seen, Duration.ofSeconds(30));
            assertThat(delivery).as("delivery %d", i + 1).isNotNull();
            deliveries.add(delivery);
        }
        for (int i = 0; i < deliveries.size(); i++) {
            Seen delivery = deliveries.get(i);
            assertThat(delivery.messageId()).isEqualTo(id);
            assertThat(delivery.value()).isEqualTo("order-2");
            assertThat(delivery.key()).contains("k-2");
            assertThat(delivery.properties()).isEqualTo(Map.of("origin", "test"));
            assertThat(delivery.attempt()).isEqualTo(i + 1);
        }
        List<Long> latencies = new ArrayList<>();
        for (int i = 0; i < retries; i++) {
            latencies.add(deliveries.get(i + 1).atNanos() - returnedAt.get(i));
        }
        latencies.sort(null);
        double medianMillis = latencies.get(retries / 2) / 1e6;
        System.out.printf(
                "retry: nack to redelivery over %d retries: median %.1f ms, max %.1f ms%n",
                retries, medianMillis, latencies.get(retries - 1) / 1e6);
        // The client's nack-delay floor alone would give about 105 ms.
        assertThat(medianMillis).isLessThan(50);
        assertThat(metrics.count(Settled.RETRY)).isEqualTo(retries);
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
    }
}
