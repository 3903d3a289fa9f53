package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.next;
import static dev.settle.runtime.driver.DriverFixture.seen;
import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.pulsar.client.api.Message;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code maxAttempts} + {@code deadLetterTopic}: a failing message is seen exactly maxAttempts times. */
@ExtendWith(DriverFixtures.class)
class DeadLetterIT {

    static Stream<Arguments> failures() {
        Function<Delivery<String>, Outcome> retry = delivery -> Outcome.retry();
        Function<Delivery<String>, Outcome> retryAfter = delivery -> Outcome.retryAfter(Duration.ofMillis(200));
        Function<Delivery<String>, Outcome> none = delivery -> null;
        // An Error, not an Exception: a handler's bug of any kind is a failed attempt, not a dead driver.
        Function<Delivery<String>, Outcome> fail = delivery -> {
            throw new AssertionError("always fails");
        };
        return Stream.of(
                Arguments.of("retry", SubscriptionKind.SHARED, retry, null),
                Arguments.of("retry", SubscriptionKind.KEY_SHARED, retry, null),
                Arguments.of("retryAfter", SubscriptionKind.SHARED, retryAfter, null),
                Arguments.of("retryAfter", SubscriptionKind.KEY_SHARED, retryAfter, null),
                Arguments.of("none+ackTimeout", SubscriptionKind.SHARED, none, Duration.ofSeconds(1)),
                Arguments.of("throws", SubscriptionKind.SHARED, fail, null));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("failures")
    void aFailingMessageIsSeenExactlyMaxAttemptsTimesThenDeadLettered(
            String how,
            SubscriptionKind type,
            Function<Delivery<String>, Outcome> decide,
            Duration ackTimeout,
            DriverFixture pulsar)
            throws Exception {
        String topic = topic("dlq-" + how.replace('+', '-'));
        String deadLetters = topic + "-dlq";
        BlockingQueue<Seen> seen = seen();
        RecordingMetrics metrics = new RecordingMetrics();
        SubscriptionSpec spec = spec(topic, type)
                .deadLetter(3, deadLetters)
                .ackTimeout(ackTimeout)
                .build();
        pulsar.start(spec, seen, decide, metrics);

        pulsar.send(topic, "poison", "key-1", Map.of("origin", "dlq-test"));

        List<Integer> attempts = new ArrayList<>();
        for (Seen delivery = next(seen, Duration.ofSeconds(30));
                delivery != null;
                delivery = next(seen, Duration.ofSeconds(4))) {
            attempts.add(delivery.attempt());
        }
        assertThat(attempts).containsExactly(1, 2, 3);

        List<Message<String>> dead = pulsar.readAll(deadLetters, 1, Duration.ofSeconds(20));
        assertThat(dead).hasSize(1);
        assertThat(dead.get(0).getValue()).isEqualTo("poison");
        assertThat(dead.get(0).getKey()).isEqualTo("key-1");
        assertThat(dead.get(0).getProperties()).containsEntry("origin", "dlq-test");
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
        // Dead letters are kept for the dead-letter topic's initial subscription, even with no reader yet.
        assertThat(pulsar.admin.topics().getSubscriptions(deadLetters)).contains("sub-dlq");
    }
}
