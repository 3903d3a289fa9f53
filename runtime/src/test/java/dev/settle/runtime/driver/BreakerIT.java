package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.seen;
import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.BreakerSettings;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Outcome;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The outage circuit breaker on a real broker (docs/concepts.md, "An outage is not a poison message"): a dependency
 * down for 10 s under a stream of about 30 msg/s sends nothing to the dead-letter topic, and one message failing alone
 * among healthy ones still does, at its cap. Both run at the default backoff (100 ms doubling) and maxAttempts 5.
 */
@ExtendWith(DriverFixtures.class)
class BreakerIT {
    private static final int MAX_ATTEMPTS = 5;
    /** About 30 msg/s. */
    private static final Duration SEND_EVERY = Duration.ofMillis(33);

    /** The breaker's changes, each with the moment it was told (System.nanoTime). */
    private record Change(String state, long atNanos) {}

    private static final class Recording extends RecordingMetrics {
        final List<Change> changes = new CopyOnWriteArrayList<>();

        @Override
        public void breakerChanged(String state) {
            changes.add(new Change(state, System.nanoTime()));
        }
    }

    @Test
    void aDependencyDownForTenSecondsDeadLettersNothingAndLosesNothing(DriverFixture pulsar) throws Exception {
        long testStarted = System.nanoTime();
        String topic = topic("breaker-outage");
        String deadLetters = topic + "-dlq";
        AtomicBoolean down = new AtomicBoolean();
        Set<String> handled = ConcurrentHashMap.newKeySet();
        AtomicLong firstLastAttempt = new AtomicLong();
        Function<Delivery<String>, Outcome> decide = delivery -> {
            if (delivery.attempt() == MAX_ATTEMPTS) {
                firstLastAttempt.compareAndSet(0, System.nanoTime());
            }
            if (down.get()) {
                throw new UncheckedIOException(new ConnectException("the test's dependency is down"));
            }
            handled.add(delivery.value());
            return Outcome.ack();
        };
        Recording metrics = new Recording();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(MAX_ATTEMPTS, deadLetters)
                .build();
        SubscriptionDriver driver = pulsar.start(spec, seen(), decide, metrics);

        AtomicInteger sent = new AtomicInteger();
        ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor();
        long downAt;
        long upAt;
        try (Producer<String> producer = pulsar.client
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            sender.scheduleAtFixedRate(
                    () -> {
                        int n = sent.getAndIncrement();
                        producer.newMessage().key("k" + n).value("m" + n).sendAsync();
                    },
                    0,
                    SEND_EVERY.toMillis(),
                    TimeUnit.MILLISECONDS);
            await().atMost(Duration.ofSeconds(60)).until(() -> handled.size() >= 30);
            down.set(true);
            downAt = System.nanoTime();
            // The outage lasts 10 s, as the test's dependency says; nothing to wait for but the clock.
            await().pollDelay(Duration.ofSeconds(10))
                    .atMost(Duration.ofSeconds(11))
                    .until(() -> true);
            down.set(false);
            upAt = System.nanoTime();
            await().pollDelay(Duration.ofSeconds(2))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> true);
            sender.shutdown();
            assertThat(sender.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
            producer.flush();
        } finally {
            sender.shutdownNow();
        }
        int total = sent.get();

        // Nothing lost: every message handled once the dependency is back, the backlog drained.
        await().atMost(Duration.ofSeconds(45))
                .untilAsserted(() -> assertThat(handled)
                        .as("handled of %d sent; breaker %s (%s)", total, driver.breakerState(), driver.breakerReason())
                        .hasSize(total));
        await().atMost(Duration.ofSeconds(15)).until(() -> pulsar.backlog(topic, "sub") == 0);

        assertThat(metrics.deadLettered.get()).as("dead letters counted").isZero();
        assertThat(pulsar.readAll(deadLetters, 0, Duration.ZERO, Schema.BYTES))
                .as("the dead-letter topic")
                .isEmpty();

        List<String> states = metrics.changes.stream().map(Change::state).toList();
        assertThat(states)
                .as("the breaker's first state, then its changes")
                .startsWith("closed", "open")
                .endsWith("closed");
        long openedAt = metrics.changes.get(1).atNanos();
        assertThat(openedAt).as("opened after the outage began").isGreaterThan(downAt);
        if (firstLastAttempt.get() != 0) {
            assertThat(firstLastAttempt.get())
                    .as("receive paused before any message spent its last attempt")
                    .isGreaterThan(openedAt);
        }
        long closedAt = metrics.changes.get(metrics.changes.size() - 1).atNanos();
        assertThat(Duration.ofNanos(closedAt - upAt))
                .as("resumed within 5 s of the outage's end (x3 on a shared machine)")
                .isLessThan(Duration.ofSeconds(15));
        assertThat(driver.breakerState()).isEqualTo("closed");
        assertThat(driver.heldForOutage()).isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - testStarted)).isLessThan(Duration.ofSeconds(60));
    }

    @Test
    void aPoisonMessageAmongHealthyOnesIsDeadLetteredAtItsCapWithTheBreakerClosed(DriverFixture pulsar)
            throws Exception {
        String topic = topic("breaker-poison");
        String deadLetters = topic + "-dlq";
        Set<String> handled = ConcurrentHashMap.newKeySet();
        List<Integer> poisonAttempts = new CopyOnWriteArrayList<>();
        // It fails with a dependency's kind of cause (a timeout), but alone: others with the same dependency succeed.
        Function<Delivery<String>, Outcome> decide = delivery -> {
            if (delivery.value().equals("poison")) {
                poisonAttempts.add(delivery.attempt());
                throw new IllegalStateException(new TimeoutException("only this message times out"));
            }
            handled.add(delivery.value());
            return Outcome.ack();
        };
        Recording metrics = new Recording();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(MAX_ATTEMPTS, deadLetters)
                .build();
        SubscriptionDriver driver = pulsar.start(spec, seen(), decide, metrics);

        AtomicInteger sent = new AtomicInteger();
        ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor();
        try (Producer<String> producer = pulsar.client
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            sender.scheduleAtFixedRate(
                    () -> {
                        int n = sent.getAndIncrement();
                        producer.newMessage()
                                .key("k" + n)
                                .value(n == 10 ? "poison" : "m" + n)
                                .sendAsync();
                    },
                    0,
                    SEND_EVERY.toMillis(),
                    TimeUnit.MILLISECONDS);
            await().atMost(Duration.ofSeconds(45)).until(() -> poisonAttempts.size() >= MAX_ATTEMPTS);
            sender.shutdown();
            assertThat(sender.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
            producer.flush();
        } finally {
            sender.shutdownNow();
        }

        // Read as bytes: the dead-letter producer may still hold the topic with no schema, which refuses STRING.
        assertThat(pulsar.readAll(deadLetters, 1, Duration.ofSeconds(20), Schema.BYTES))
                .extracting(message -> new String(message.getValue(), StandardCharsets.UTF_8))
                .containsExactly("poison");
        assertThat(poisonAttempts).containsExactly(1, 2, 3, 4, 5);
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(handled).hasSize(sent.get() - 1));
        assertThat(metrics.changes)
                .extracting(Change::state)
                .as("the breaker never changed")
                .containsExactly("closed");
        assertThat(driver.breakerState()).isEqualTo("closed");
        assertThat(Map.of("held", driver.heldForOutage())).containsEntry("held", 0);
    }

    @Test
    void offTheBreakerLetsAnOutageDeadLetterItsMessages(DriverFixture pulsar) throws Exception {
        // The contrast, kept as a test: with breaker: {enabled: false}, the outage test's first guarantee fails.
        String topic = topic("breaker-off");
        String deadLetters = topic + "-dlq";
        Function<Delivery<String>, Outcome> decide = delivery -> {
            throw new UncheckedIOException(new ConnectException("the test's dependency is down"));
        };
        RecordingMetrics metrics = new RecordingMetrics();
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(MAX_ATTEMPTS, deadLetters)
                .breaker(BreakerSettings.OFF)
                .build();
        SubscriptionDriver driver = pulsar.start(spec, seen(), decide, metrics);
        for (int n = 0; n < 10; n++) {
            pulsar.send(topic, "m" + n, "k" + n, Map.of());
        }
        assertThat(pulsar.readAll(deadLetters, 10, Duration.ofSeconds(30), Schema.BYTES))
                .hasSize(10);
        assertThat(driver.breakerState()).isEqualTo("off");
    }
}
