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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;

/** {@code retryAfter(d)}: held in the process on one shared timer, then negatively acknowledged. */
@ExtendWith(DriverFixtures.class)
@Tag("alone") // runs in the runtime-it-alone module
@Isolated("it counts the JVM's threads")
class RetryAfterIT {
    private final RecordingMetrics metrics = new RecordingMetrics();

    @Test
    void retryAfterOneSecondBringsTheMessageBackAfterOneToThreeSeconds(DriverFixture pulsar) throws Exception {
        String topic = topic("retry-after");
        BlockingQueue<Seen> seen = seen();
        pulsar.start(
                spec(topic, SubscriptionKind.SHARED)
                        .ackTimeout(Duration.ofSeconds(10))
                        .build(),
                seen,
                delivery -> delivery.attempt() == 1 ? Outcome.retryAfter(Duration.ofSeconds(1)) : Outcome.ack(),
                metrics);

        pulsar.send(topic, "rate-limited", null, Map.of());

        Seen first = next(seen, Duration.ofSeconds(30));
        Seen second = next(seen, Duration.ofSeconds(5));
        assertThat(second).isNotNull();
        double seconds = (second.atNanos() - first.atNanos()) / 1e9;
        System.out.printf("retryAfter(1s): back after %.3f s%n", seconds);
        assertThat(seconds).isBetween(1.0, 3.0);
        assertThat(second.messageId()).isEqualTo(first.messageId());
        assertThat(second.attempt()).isEqualTo(2);
        assertThat(metrics.count(Settled.RETRY_AFTER)).isEqualTo(1);
        await().atMost(Duration.ofSeconds(5)).until(() -> metrics.held.get() == 0);
    }

    @Test
    void tenThousandHeldMessagesDoNotAddTenThousandThreads(DriverFixture pulsar) throws Exception {
        String topic = topic("held");
        int messages = 10_000;
        try (Producer<String> producer = pulsar.client
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(true)
                .batchingMaxMessages(500)
                .blockIfQueueFull(true)
                .create()) {
            // Create the subscription's starting point before the backlog exists? Earliest makes it moot.
            CompletableFuture<?>[] sends = new CompletableFuture<?>[messages];
            for (int i = 0; i < messages; i++) {
                sends[i] = producer.sendAsync("held-" + i);
            }
            CompletableFuture.allOf(sends).get(60, TimeUnit.SECONDS);
        }
        int baseline = java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount();
        AtomicInteger handled = new AtomicInteger();
        SubscriptionSpec spec =
                spec(topic, SubscriptionKind.SHARED).batchIndexAck(true).build();
        SubscriptionDriver driver = pulsar.start(
                spec,
                (dev.settle.sdk.Handler<String>) delivery -> {
                    handled.incrementAndGet();
                    return Outcome.retryAfter(Duration.ofMinutes(5));
                },
                String.class,
                metrics);

        await().atMost(Duration.ofSeconds(60)).until(() -> metrics.held.get() == messages);
        int threads = java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount();
        System.out.printf(
                "retryAfter: %d held messages, live threads %d (baseline %d, +%d)%n",
                metrics.held.get(), threads, baseline, threads - baseline);
        assertThat(threads - baseline).isLessThan(100);
        assertThat(metrics.held.get()).isEqualTo(messages);
        assertThat(handled.get()).isEqualTo(messages);

        pulsar.stop(driver);
        assertThat(metrics.held.get()).as("held gauge after the stop").isZero();
    }

    @Test
    void stopDuringARetryAfterWaitLosesTheWaitNotTheMessage(DriverFixture pulsar) throws Exception {
        String topic = topic("stop-held");
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED).build();
        SubscriptionDriver first =
                pulsar.start(spec, seen, delivery -> Outcome.retryAfter(Duration.ofSeconds(30)), metrics);
        pulsar.send(topic, "held-at-stop", null, Map.of());
        Seen held = next(seen, Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(5)).until(() -> metrics.held.get() == 1);

        long stopping = System.nanoTime();
        first.stop(Duration.ofSeconds(20));
        double stopSeconds = (System.nanoTime() - stopping) / 1e9;
        assertThat(stopSeconds).as("seconds to stop").isLessThan(20);

        long restarted = System.nanoTime();
        pulsar.start(spec, seen, delivery -> Outcome.ack(), new RecordingMetrics());
        Seen again = next(seen, Duration.ofSeconds(20));
        assertThat(again).as("delivered to the new runtime").isNotNull();
        double backAfter = (again.atNanos() - restarted) / 1e9;
        System.out.printf(
                "stop with a held message: stopped in %.2f s, back to a new consumer after %.2f s%n",
                stopSeconds, backAfter);
        assertThat(again.messageId()).isEqualTo(held.messageId());
        assertThat(backAfter).isLessThan(15);
        // A consumer that goes away returns the message without raising the count.
        assertThat(again.attempt()).isEqualTo(1);
    }
}
