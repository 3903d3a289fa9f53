package dev.settle.runtime.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.manifest.Topics;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplayRulesTest {
    private static final ReplayRules.Targets ORDERS = new ReplayRules.Targets(
            "orders",
            Topics.named(List.of("persistent://public/default/orders", "persistent://acme/billing/invoices")),
            List.of("persistent://public/default/orders-dlq", "persistent://public/default/other-dlq"));

    private static ReplayRules rules(List<String> conditions, int maxReplays) {
        return ReplayRules.of(conditions, maxReplays, ORDERS);
    }

    private static Map<String, String> letter(String stage, String replays) {
        Map<String, String> letter = new HashMap<>();
        letter.put("origin", "web");
        letter.put(DeadLetterProperties.REAL_TOPIC, "persistent://public/default/orders");
        letter.put(DeadLetterProperties.REAL_SUBSCRIPTION, "orders");
        letter.put(DeadLetterProperties.ORIGIN_MESSAGE_ID, "3:1:-1");
        if (stage != null) {
            letter.put(DeadLetterProperties.STAGE, stage);
            letter.put(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.IllegalStateException");
        }
        if (replays != null) {
            letter.put(DeadLetterProperties.REPLAY_COUNT, replays);
        }
        return letter;
    }

    @Test
    void aReplayKeepsTheOriginalsPropertiesCountsOneMoreAndCarriesTheOriginalsIdForSettleTrace() {
        ReplayRules.Decision decision = rules(List.of(), 3).decide(letter("handler", "1"));

        assertThat(decision.action()).isEqualTo(ReplayRules.Action.REPLAY);
        assertThat(decision.topic()).contains("persistent://public/default/orders");
        assertThat(decision.properties())
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        "origin",
                        "web",
                        DeadLetterProperties.REPLAY_COUNT,
                        "2",
                        Origin.PROPERTY,
                        "persistent://public/default/orders@3:1:-1"));
    }

    @Test
    void aReplayCarriesTheDeadLettersTraceContextSoTheTraceGoesOn() {
        Map<String, String> letter = letter("handler", null);
        // Settle's dead letter carries its own span's context over the original's (docs/observability.md, "Traces").
        letter.put("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        letter.put("tracestate", "vendor=1");

        assertThat(rules(List.of(), 3).decide(letter).properties())
                .containsEntry("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
                .containsEntry("tracestate", "vendor=1");
    }

    @Test
    void aLetterReplayedMaxReplaysTimesIsParkedAsItIs() {
        Map<String, String> third = letter("handler", "3");

        ReplayRules.Decision decision = rules(List.of(), 3).decide(third);

        assertThat(decision.action()).isEqualTo(ReplayRules.Action.PARK);
        assertThat(decision.properties()).isEqualTo(third);
        assertThat(rules(List.of(), 4).decide(third).action()).isEqualTo(ReplayRules.Action.REPLAY);
    }

    @Test
    void whereMatchesOneValueOfEachKeyGivenAndStageNoneIsTheClientsLetters() {
        ReplayRules handlerOrDecode = rules(List.of("stage=handler", "stage=decode"), 3);
        assertThat(handlerOrDecode.decide(letter("handler", null)).action()).isEqualTo(ReplayRules.Action.REPLAY);
        assertThat(handlerOrDecode.decide(letter("output", null)).action()).isEqualTo(ReplayRules.Action.SKIP);

        ReplayRules both = rules(List.of("stage=handler", "exception=java.io.IOException"), 3);
        assertThat(both.decide(letter("handler", null)).action()).isEqualTo(ReplayRules.Action.SKIP);

        ReplayRules client = rules(List.of("stage=none"), 3);
        assertThat(client.decide(letter(null, null)).action()).isEqualTo(ReplayRules.Action.REPLAY);
        assertThat(client.decide(letter("handler", null)).action()).isEqualTo(ReplayRules.Action.SKIP);
    }

    @Test
    void aLetterWithNoRealTopicIsLeft() {
        Map<String, String> nowhere = letter("handler", null);
        nowhere.remove(DeadLetterProperties.REAL_TOPIC);

        assertThat(rules(List.of(), 3).decide(nowhere).action()).isEqualTo(ReplayRules.Action.UNREPLAYABLE);
    }

    @Test
    void aConditionOfAnotherKeyIsRefusedNamingTheOnesThereAre() {
        assertThatThrownBy(() -> rules(List.of("attempts=3"), 3))
                .hasMessageStartingWith("--where 'attempts=3': say stage=STAGE")
                .hasMessageContaining("exception=CLASS");
        assertThatThrownBy(() -> rules(List.of(), 0)).hasMessage("--max-replays must be at least 1, was 0");
    }

    @Test
    void aConsumedTopicIsATargetShortQualifiedOrAPartitionOfOne() {
        assertThat(ORDERS.refusal("orders")).isEmpty();
        assertThat(ORDERS.refusal("persistent://public/default/orders")).isEmpty();
        assertThat(ORDERS.refusal("persistent://public/default/orders-partition-7"))
                .isEmpty();
        assertThat(ORDERS.refusal("acme/billing/invoices")).isEmpty();
        assertThat(ORDERS.refusal("persistent://acme/billing/invoices-partition-0"))
                .isEmpty();
    }

    @Test
    void aTopicTheSubscriptionDoesNotConsumeIsRefusedNamingTheTopics() {
        assertThat(ORDERS.refusal("payments"))
                .contains("REAL_TOPIC persistent://public/default/payments is not a topic subscription 'orders'"
                        + " consumes (persistent://public/default/orders,persistent://acme/billing/invoices)");
        // Another namespace's topic of the same name, a partition-like suffix of no consumed topic, another domain.
        assertThat(ORDERS.refusal("persistent://acme/billing/orders")).isPresent();
        assertThat(ORDERS.refusal("persistent://public/default/orders-partition-x"))
                .isPresent();
        assertThat(ORDERS.refusal("non-persistent://public/default/orders")).isPresent();
        assertThat(ORDERS.refusal("persistent://public/default/orders/x"))
                .get()
                .asString()
                .contains("is not a valid Pulsar topic name");
    }

    @Test
    void settlesOwnAndPulsarsSystemTopicsAreNeverTargetsEvenWhenThePatternMatchesThem() {
        ReplayRules.Targets everything = new ReplayRules.Targets(
                "all",
                Topics.matching("persistent://public/default/.*"),
                List.of("persistent://public/default/orders-dlq", "persistent://public/default/other-dlq"));

        assertThat(everything.refusal("persistent://public/default/anything")).isEmpty();
        assertThat(everything.refusal("persistent://public/default/orders-dlq"))
                .contains("REAL_TOPIC persistent://public/default/orders-dlq is a dead-letter or parking topic of"
                        + " the manifest");
        assertThat(everything.refusal("orders-dlq-parked")).isPresent();
        assertThat(everything.refusal("other-dlq")).isPresent();
        assertThat(everything.refusal("persistent://public/default/settle-code"))
                .contains("REAL_TOPIC persistent://public/default/settle-code is a topic of Settle's code store");
        assertThat(everything.refusal("settle-code-instances")).isPresent();
        assertThat(everything.refusal("persistent://public/default/__change_events"))
                .contains("REAL_TOPIC persistent://public/default/__change_events is a Pulsar system topic");
    }

    @Test
    void aPatternMatchesTopicsAndTheirPartitionsInItsOwnNamespaceOnly() {
        ReplayRules.Targets pattern =
                new ReplayRules.Targets("orders", Topics.matching("persistent://public/default/orders-.*"), List.of());

        assertThat(pattern.refusal("persistent://public/default/orders-eu")).isEmpty();
        assertThat(pattern.refusal("orders-eu-partition-2")).isEmpty();
        assertThat(pattern.refusal("persistent://public/default/payments")).isPresent();
        assertThat(pattern.refusal("persistent://acme/billing/orders-eu")).isPresent();
    }

    @Test
    void aLetterNamingAForeignTopicIsRefusedNotParkedWhateverItsReplayCount() {
        Map<String, String> forged = letter("handler", "9");
        forged.put(DeadLetterProperties.REAL_TOPIC, "persistent://public/default/payments");

        ReplayRules.Decision decision = rules(List.of(), 3).decide(forged);

        assertThat(decision.action()).isEqualTo(ReplayRules.Action.FOREIGN);
        assertThat(decision.topic()).isEmpty();
        assertThat(decision.why()).contains("persistent://public/default/payments is not a topic");
        Map<String, String> parkingTopic = letter("handler", null);
        parkingTopic.put(DeadLetterProperties.REAL_TOPIC, "orders-dlq-parked");
        assertThat(rules(List.of(), 3).decide(parkingTopic).action()).isEqualTo(ReplayRules.Action.FOREIGN);
    }

    @Test
    void aReplayCountThatIsNotAWholeNumberCountsAsNone() {
        for (String count : List.of("-5", "+2", " 2", "x", "99999999999")) {
            assertThat(ReplayRules.replayCount(Map.of(DeadLetterProperties.REPLAY_COUNT, count)))
                    .as(count)
                    .isZero();
        }
        assertThat(ReplayRules.replayCount(Map.of(DeadLetterProperties.REPLAY_COUNT, "2")))
                .isEqualTo(2);
    }

    @Test
    void aLetterOfAnotherSubscriptionSharingTheTopicIsLeftToItsOwnReplay() {
        Map<String, String> shipping = letter("handler", null);
        shipping.put(DeadLetterProperties.SUBSCRIPTION, "shipping");
        Map<String, String> clientsOfShipping = letter(null, null);
        clientsOfShipping.put(DeadLetterProperties.REAL_SUBSCRIPTION, "shipping");
        Map<String, String> ours = letter("handler", null);
        ours.put(DeadLetterProperties.SUBSCRIPTION, "orders");
        ours.put(DeadLetterProperties.REAL_SUBSCRIPTION, "shipping");
        Map<String, String> namingNone = letter("handler", null);
        namingNone.remove(DeadLetterProperties.REAL_SUBSCRIPTION);

        assertThat(rules(List.of(), 3).decide(shipping).action()).isEqualTo(ReplayRules.Action.OTHER_SUBSCRIPTION);
        assertThat(rules(List.of(), 3).decide(clientsOfShipping).action())
                .as("the client's letter names its subscription in REAL_SUBSCRIPTION")
                .isEqualTo(ReplayRules.Action.OTHER_SUBSCRIPTION);
        assertThat(rules(List.of(), 3).decide(ours).action())
                .as("settle.subscription is Settle's own word")
                .isEqualTo(ReplayRules.Action.REPLAY);
        assertThat(rules(List.of(), 3).decide(namingNone).action())
                .as("a letter naming no subscription is hidden from none")
                .isEqualTo(ReplayRules.Action.REPLAY);
    }
}
