package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Outcome;
import java.lang.reflect.Constructor;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class SettlementTest {
    private final List<String> calls = java.util.Collections.synchronizedList(new ArrayList<>());
    private final ConsumerCalls consumer = new ConsumerCalls() {
        @Override
        public void acknowledge(Message<?> message) {
            calls.add("acknowledge");
        }

        @Override
        public void negativeAcknowledge(Message<?> message) {
            calls.add("negativeAcknowledge");
        }
    };
    private final HeldRetries timer = new HeldRetries();
    private final RecordingMetrics metrics = new RecordingMetrics();

    @AfterEach
    void stopTimer() {
        timer.close();
    }

    private Settlement settlement(SubscriptionSpec spec) {
        return new Settlement(spec, consumer, timer, metrics);
    }

    private static SubscriptionSpec shared() {
        return SubscriptionSpec.of("orders", List.of("persistent://public/default/orders"), SubscriptionKind.SHARED,
                Path.of("orders.jar"));
    }

    @Test
    void everyPermittedOutcomeHasItsOwnSettlement() throws Exception {
        Set<Settled> seen = EnumSet.noneOf(Settled.class);
        for (Class<?> type : Outcome.class.getPermittedSubclasses()) {
            Outcome outcome = instanceOf(type);
            Settled how = Settlement.classify(outcome);
            assertThat(seen.add(how)).as("%s maps to %s, already taken", type.getSimpleName(), how).isTrue();
        }
        assertThat(seen).containsExactlyInAnyOrder(Settled.ACK, Settled.RETRY, Settled.RETRY_AFTER, Settled.DROP);
        assertThat(Settlement.classify(null)).isEqualTo(Settled.NONE);
    }

    @Test
    void eachOutcomeIsExactlyOneCallOnTheConsumer() {
        Settlement settlement = settlement(shared());

        assertThat(settlement.apply(message(0), Outcome.ack(), System.nanoTime())).isEqualTo(Settled.ACK);
        assertThat(settlement.apply(message(0), Outcome.drop(), System.nanoTime())).isEqualTo(Settled.DROP);
        assertThat(settlement.apply(message(0), Outcome.retry(), System.nanoTime())).isEqualTo(Settled.RETRY);
        assertThat(settlement.apply(message(0), null, System.nanoTime())).isEqualTo(Settled.NONE);
        assertThat(settlement.failed(message(0))).isEqualTo(Settled.ERROR);

        assertThat(calls).containsExactly("acknowledge", "acknowledge", "negativeAcknowledge", "negativeAcknowledge");
    }

    @Test
    void retryAfterHoldsTheMessageThenNegativelyAcknowledgesIt() throws Exception {
        Settlement settlement = settlement(shared());

        long start = System.nanoTime();
        Settled how = settlement.apply(message(0), Outcome.retryAfter(Duration.ofSeconds(2)), start);

        assertThat(how).isEqualTo(Settled.RETRY_AFTER);
        assertThat(calls).isEmpty();
        assertThat(settlement.held()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> !calls.isEmpty());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        assertThat(calls).containsExactly("negativeAcknowledge");
        assertThat(settlement.held()).isZero();
        assertThat(metrics.held.get()).isZero();
    }

    @Test
    void retryAfterNotShorterThanTheAckTimeoutIsRefusedAndRetriedAtOnce() {
        Settlement settlement = settlement(shared().withAckTimeout(Duration.ofSeconds(2)));

        Settled how = settlement.apply(message(0), Outcome.retryAfter(Duration.ofSeconds(2)), System.nanoTime());

        assertThat(how).isEqualTo(Settled.REFUSED);
        assertThat(calls).containsExactly("negativeAcknowledge");
        assertThat(settlement.held()).isZero();
    }

    @Test
    void retryAfterLongerThanWhatIsLeftOfTheAckTimeoutIsRefused() {
        Settlement settlement = settlement(shared().withAckTimeout(Duration.ofSeconds(2)));
        long receivedOneAndAHalfSecondsAgo = System.nanoTime() - Duration.ofMillis(1500).toNanos();

        Settled how = settlement.apply(message(0), Outcome.retryAfter(Duration.ofSeconds(1)), receivedOneAndAHalfSecondsAgo);

        assertThat(how).isEqualTo(Settled.REFUSED);
    }

    @Test
    void withoutAnAckTimeoutAnyPositiveDelayIsHeld() {
        Settlement settlement = settlement(shared());

        Settled how = settlement.apply(message(0), Outcome.retryAfter(Duration.ofDays(1)), System.nanoTime());

        assertThat(how).isEqualTo(Settled.RETRY_AFTER);
        assertThat(settlement.held()).isEqualTo(1);
    }

    @Test
    void abandoningHeldRetriesLeavesTheMessagesUnacknowledged() throws Exception {
        Settlement settlement = settlement(shared());
        settlement.apply(message(0), Outcome.retryAfter(Duration.ofSeconds(1)), System.nanoTime());

        assertThat(settlement.abandonHeld()).isEqualTo(1);
        // Past the wait: the timer fires and must do nothing.
        Thread.sleep(1500);

        assertThat(calls).isEmpty();
        assertThat(metrics.held.get()).isZero();
    }

    @Test
    void aFailedLastAttemptCountsAsDeadLettered() {
        Settlement settlement = settlement(shared().withDeadLetter(3, "persistent://public/default/orders-dlq"));

        settlement.apply(message(1), Outcome.retry(), System.nanoTime());
        assertThat(metrics.deadLettered.get()).isZero();
        settlement.apply(message(2), Outcome.retry(), System.nanoTime());
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
        settlement.failed(message(2));
        assertThat(metrics.deadLettered.get()).isEqualTo(2);
        settlement.apply(message(2), Outcome.ack(), System.nanoTime());
        assertThat(metrics.deadLettered.get()).isEqualTo(2);
    }

    @Test
    void noOutcomeOnTheLastAttemptIsDeadLetteredOnlyWithAnAckTimeout() {
        settlement(shared().withDeadLetter(2, "persistent://public/default/orders-dlq"))
                .apply(message(1), null, System.nanoTime());
        assertThat(metrics.deadLettered.get()).isZero();

        settlement(shared().withDeadLetter(2, "persistent://public/default/orders-dlq")
                        .withAckTimeout(Duration.ofSeconds(5)))
                .apply(message(1), null, System.nanoTime());
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
    }

    private static Outcome instanceOf(Class<?> type) throws Exception {
        Constructor<?> constructor = type.getDeclaredConstructors()[0];
        Object[] arguments = new Object[constructor.getParameterCount()];
        for (int i = 0; i < arguments.length; i++) {
            arguments[i] = constructor.getParameterTypes()[i] == Duration.class ? Duration.ofSeconds(1) : null;
        }
        constructor.setAccessible(true);
        return (Outcome) constructor.newInstance(arguments);
    }

    /** A message with a redelivery count: only the parts a settlement reads. */
    private static Message<?> message(int redeliveryCount) {
        return (Message<?>) Proxy.newProxyInstance(SettlementTest.class.getClassLoader(), new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getRedeliveryCount" -> redeliveryCount;
                    case "getMessageId" -> MessageId.earliest;
                    case "toString" -> "message";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
