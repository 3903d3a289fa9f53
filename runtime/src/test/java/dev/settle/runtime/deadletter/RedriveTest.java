package dev.settle.runtime.deadletter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.Topics;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The re-drive's rules without a broker: which held copy goes back, where to, in which order, and what it carries. */
class RedriveTest {
    private static final String ORDERS = "persistent://public/default/orders";
    private static final ReplayRules.Targets TARGETS = new ReplayRules.Targets(
            "orders",
            Topics.named(List.of(ORDERS)),
            List.of("persistent://public/default/orders-dlq", "persistent://public/default/orders-held"));
    private static final HeldBy GENERATION_1 = new HeldBy(1, "aa11");
    private static final HeldBy GENERATION_2 = new HeldBy(2, "bb22");

    private static Map<String, String> held(HeldBy by, String topic) {
        Map<String, String> held = new LinkedHashMap<>();
        held.put("tenant", "acme");
        held.put(DeadLetterProperties.REAL_TOPIC, topic);
        held.put(DeadLetterProperties.REAL_SUBSCRIPTION, "orders");
        held.put(DeadLetterProperties.ORIGIN_MESSAGE_ID, "7:3:-1:0");
        held.put(DeadLetterProperties.SUBSCRIPTION, "orders");
        held.put(DeadLetterProperties.STAGE, "handler");
        held.put(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.IllegalStateException");
        held.put(DeadLetterProperties.EXCEPTION_MESSAGE, "bug in generation 1");
        held.put(DeadLetterProperties.ATTEMPTS, "3");
        held.put(DeadLetterProperties.CODE, "com.acme.Orders (generation 1)");
        held.putAll(by.properties());
        return held;
    }

    @Test
    void aMessageHeldByOtherCodeGoesBackToItsOwnTopic() {
        Redrive.Decision decision =
                Redrive.decide(held(GENERATION_1, ORDERS), TARGETS, by -> !GENERATION_2.sameCode(by));

        assertThat(decision.action()).isEqualTo(Redrive.Action.REDRIVE);
        assertThat(decision.topic()).contains(ORDERS);
    }

    @Test
    void aMessageHeldByTheRunningCodeWaitsForAnotherGeneration() {
        Redrive.Decision decision =
                Redrive.decide(held(GENERATION_2, ORDERS), TARGETS, by -> !GENERATION_2.sameCode(by));

        assertThat(decision.action()).isEqualTo(Redrive.Action.SAME_CODE);
    }

    @Test
    void theSameJarUploadedAgainIsNoFixButAnotherJarIs() {
        assertThat(new HeldBy(3, "aa11").sameCode(GENERATION_1)).isTrue();
        assertThat(new HeldBy(1, "cc33").sameCode(GENERATION_1)).isFalse();
        assertThat(new HeldBy(1, "").sameCode(new HeldBy(1, "aa11")))
                .as("without a sha256 on one side, the generation tells")
                .isTrue();
        assertThat(HeldBy.UNKNOWN.sameCode(GENERATION_1)).isFalse();
    }

    @Test
    void aHeldCopyNamingATopicTheSubscriptionDoesNotConsumeIsRefused() {
        Redrive.Decision payments =
                Redrive.decide(held(GENERATION_1, "persistent://public/default/payments"), TARGETS, by -> true);
        Redrive.Decision dlq =
                Redrive.decide(held(GENERATION_1, "persistent://public/default/orders-dlq"), TARGETS, by -> true);
        Map<String, String> nowhere = held(GENERATION_1, ORDERS);
        nowhere.remove(DeadLetterProperties.REAL_TOPIC);

        assertThat(payments.action()).isEqualTo(Redrive.Action.REFUSED);
        assertThat(payments.why()).contains("is not a topic subscription 'orders' consumes");
        assertThat(dlq.action()).isEqualTo(Redrive.Action.REFUSED);
        assertThat(dlq.why()).contains("dead-letter or parking topic");
        assertThat(Redrive.decide(nowhere, TARGETS, by -> true).action()).isEqualTo(Redrive.Action.REFUSED);
    }

    @Test
    void anotherSubscriptionsHeldCopyIsLeftAlone() {
        Map<String, String> other = held(GENERATION_1, ORDERS);
        other.put(DeadLetterProperties.SUBSCRIPTION, "invoices");

        assertThat(Redrive.decide(other, TARGETS, by -> true).action()).isEqualTo(Redrive.Action.OTHER_SUBSCRIPTION);
    }

    private record Copy(String key, Map<String, String> properties, String name) {}

    private static Copy copy(String key, long published, String position, String name) {
        Map<String, String> properties = held(GENERATION_1, ORDERS);
        properties.put(DeadLetterProperties.HELD_PUBLISH_TIME, Long.toString(published));
        properties.put(DeadLetterProperties.HELD_POSITION, position);
        return new Copy(key, properties, name);
    }

    @Test
    void eachKeysMessagesGoBackInTheOrderTheirOriginalsWerePublished() {
        List<Copy> held = new ArrayList<>(List.of(
                copy("b", 100, "7:5:-1", "b2"),
                copy("a", 100, "7:9:-1", "a3"),
                copy("a", 100, "7:2:-1", "a1"),
                copy("b", 90, "7:8:-1", "b1"),
                copy("a", 100, "7:4:-1", "a2")));

        Redrive.inKeyOrder(held, Copy::key, Copy::properties);

        assertThat(held).extracting(Copy::name).containsExactly("a1", "a2", "a3", "b1", "b2");
    }

    @Test
    void aRedrivenCopyCarriesTheOriginalsPropertiesItsOriginAndTheHoldsCauseButNotTheHoldsOtherNames() {
        Map<String, String> sent = DeadLetterProperties.redriven(held(GENERATION_1, ORDERS));

        assertThat(sent)
                .containsEntry("tenant", "acme")
                .containsEntry(Origin.PROPERTY, ORDERS + "@7:3:-1:0")
                .containsEntry(DeadLetterProperties.HELD_GENERATION, "1")
                .containsEntry(DeadLetterProperties.HELD_SHA256, "aa11")
                .containsEntry(DeadLetterProperties.HELD_STAGE, "handler")
                .containsEntry(DeadLetterProperties.HELD_EXCEPTION_CLASS, "java.lang.IllegalStateException")
                .containsEntry(DeadLetterProperties.HELD_EXCEPTION_MESSAGE, "bug in generation 1")
                .containsEntry(DeadLetterProperties.HELD_ATTEMPTS, "3")
                .doesNotContainKeys(
                        DeadLetterProperties.STAGE,
                        DeadLetterProperties.REAL_TOPIC,
                        DeadLetterProperties.SUBSCRIPTION,
                        DeadLetterProperties.REPLAY_COUNT);
        assertThat(DeadLetterProperties.isRedriven(sent)).isTrue();
    }

    @Test
    void theDeadLetterOfARedrivenCopyCarriesBothCauses() {
        Map<String, String> input = DeadLetterProperties.redriven(held(GENERATION_1, ORDERS));

        Map<String, String> letter = DeadLetterProperties.letter(
                input,
                ORDERS,
                "orders",
                "9:1:-1:0",
                Map.of(
                        DeadLetterProperties.STAGE, "handler",
                        DeadLetterProperties.EXCEPTION_CLASS, "java.lang.ArithmeticException"));

        assertThat(letter)
                .containsEntry(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.ArithmeticException")
                .containsEntry(DeadLetterProperties.HELD_EXCEPTION_CLASS, "java.lang.IllegalStateException")
                .containsEntry(DeadLetterProperties.HELD_GENERATION, "1")
                .containsEntry(DeadLetterProperties.INPUT_PREFIX + Origin.PROPERTY, ORDERS + "@7:3:-1:0")
                .doesNotContainKey(DeadLetterProperties.INPUT_PREFIX + DeadLetterProperties.HELD_STAGE);
        assertThat(Origin.ofLetter(letter)).isEqualTo(ORDERS + "@7:3:-1:0");
    }

    @Test
    void aHeldCopysReplayCountGoesWithItUnchanged() {
        Map<String, String> held = held(GENERATION_1, ORDERS);
        held.put(DeadLetterProperties.REPLAY_COUNT, "2");

        assertThat(DeadLetterProperties.redriven(held)).containsEntry(DeadLetterProperties.REPLAY_COUNT, "2");
    }
}
