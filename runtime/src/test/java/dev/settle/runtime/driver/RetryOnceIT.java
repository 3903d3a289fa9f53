package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A retry brings the message back once with the attempt one higher, never twice to the same runtime (issue 19:
 * attempt 2 was once handed to the handler twice, 5 ms apart, and acknowledged both times). Two drivers share the
 * Shared subscription, as two runtimes do: with one consumer the broker's repeat was never seen here.
 */
@ExtendWith(DriverFixtures.class)
class RetryOnceIT {
    private static final int MESSAGES = 5_000;

    @Test
    void aRetriedMessageReachesEachRuntimeOncePerAttemptAtConcurrencyEight(DriverFixture pulsar) throws Exception {
        retryEveryMessageOnceAndCountRepeats(pulsar, 8);
    }

    @Test
    void aRetriedMessageReachesEachRuntimeOncePerAttemptAtConcurrencyOne(DriverFixture pulsar) throws Exception {
        retryEveryMessageOnceAndCountRepeats(pulsar, 1);
    }

    private static void retryEveryMessageOnceAndCountRepeats(DriverFixture pulsar, int concurrency) throws Exception {
        String topic = topic("retry-once-c" + concurrency);
        /** "runtime/messageId#attempt" -> how often that runtime's handler saw it. */
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        AtomicInteger acked = new AtomicInteger();
        AtomicLong lastCall = new AtomicLong(System.nanoTime());
        RecordingMetrics metrics = new RecordingMetrics();
        long started = System.nanoTime();
        for (String runtime : List.of("A", "B")) {
            Handler<String> handler = delivery -> {
                calls.computeIfAbsent(
                                runtime + "/" + delivery.messageId() + "#" + delivery.attempt(),
                                k -> new AtomicInteger())
                        .incrementAndGet();
                lastCall.set(System.nanoTime());
                if (delivery.attempt() == 1) {
                    return Outcome.retry();
                }
                acked.incrementAndGet();
                return Outcome.ack();
            };
            pulsar.start(
                    spec(topic, SubscriptionKind.SHARED)
                            .concurrency(concurrency)
                            .build(),
                    handler,
                    String.class,
                    metrics);
        }
        try (Producer<String> producer = pulsar.client
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .maxPendingMessages(2_000)
                .blockIfQueueFull(true)
                .create()) {
            List<CompletableFuture<?>> sends = new ArrayList<>(MESSAGES);
            for (int i = 0; i < MESSAGES; i++) {
                sends.add(producer.sendAsync("m" + i));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }

        await().atMost(Duration.ofSeconds(90)).until(() -> acked.get() >= MESSAGES);
        // A repeat arrives within milliseconds of the first copy; a quiet second lets any straggler show.
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> System.nanoTime() - lastCall.get() > TimeUnit.SECONDS.toNanos(1));
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
        double seconds = (System.nanoTime() - started) / 1e9;

        Map<String, Integer> repeated = calls.entrySet().stream()
                .filter(e -> e.getValue().get() > 1)
                .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get()));
        // The same delivery handled by both runtimes is the broker's at-least-once, which no runtime can see.
        long acrossRuntimes = calls.keySet().stream()
                .map(key -> key.substring(2))
                .collect(Collectors.groupingBy(key -> key, Collectors.counting()))
                .values()
                .stream()
                .filter(runtimes -> runtimes > 1)
                .count();
        System.out.printf(
                "retry once, 2 runtimes at concurrency %d: %d messages, %d calls in %.1f s; (messageId,"
                        + " attempt) pairs handed to one runtime more than once: %d %s; to both runtimes: %d%n",
                concurrency, MESSAGES, metrics.delivered.get(), seconds, repeated.size(), repeated, acrossRuntimes);
        assertThat(repeated)
                .as("runtime/messageId#attempt handed to one runtime's handler more than once")
                .isEmpty();
        assertThat(metrics.count(Settled.RETRY)).isGreaterThanOrEqualTo(MESSAGES);
        assertThat(metrics.count(Settled.ACK)).isGreaterThanOrEqualTo(MESSAGES);
    }
}
