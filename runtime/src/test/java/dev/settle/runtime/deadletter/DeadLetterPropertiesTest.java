package dev.settle.runtime.deadletter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A dead letter names its own origin: the input chooses its properties, never Settle's (issue 40). */
class DeadLetterPropertiesTest {
    private static final String ORDERS = "persistent://public/default/orders";

    private static Map<String, String> letter(Map<String, String> input) {
        return DeadLetterProperties.letter(
                input, ORDERS, "orders", "7:3:-1", Map.of(DeadLetterProperties.STAGE, "handler"));
    }

    @Test
    void theOriginIsTheRealOneAndTheInputsValuesAreKeptUnderSettleInput() {
        Map<String, String> input = new LinkedHashMap<>();
        input.put("approved-by", "finance");
        input.put(DeadLetterProperties.REAL_TOPIC, "persistent://public/default/payments");
        input.put(DeadLetterProperties.REAL_SUBSCRIPTION, "someone-else");
        input.put(DeadLetterProperties.ORIGIN_MESSAGE_ID, "1:1:-1");
        input.put(DeadLetterProperties.STAGE, "decode");
        input.put(DeadLetterProperties.CODE, "forged");

        assertThat(letter(input))
                .containsEntry("approved-by", "finance")
                .containsEntry(DeadLetterProperties.REAL_TOPIC, ORDERS)
                .containsEntry(DeadLetterProperties.REAL_SUBSCRIPTION, "orders")
                .containsEntry(DeadLetterProperties.ORIGIN_MESSAGE_ID, "7:3:-1")
                .containsEntry(DeadLetterProperties.STAGE, "handler")
                .containsEntry("settle.input.REAL_TOPIC", "persistent://public/default/payments")
                .containsEntry("settle.input.REAL_SUBSCRIPTION", "someone-else")
                .containsEntry("settle.input.ORIGIN_MESSAGE_ID", "1:1:-1")
                .containsEntry("settle.input.settle.stage", "decode")
                .containsEntry("settle.input.settle.code", "forged")
                .doesNotContainKey(DeadLetterProperties.CODE);
    }

    @Test
    void theReplayCountIsTheOneSettlePropertyTakenFromTheInputAsAWholeNumber() {
        assertThat(letter(Map.of(DeadLetterProperties.REPLAY_COUNT, "2")))
                .containsEntry(DeadLetterProperties.REPLAY_COUNT, "2")
                .doesNotContainKey("settle.input.settle.replay.count");
        assertThat(letter(Map.of(DeadLetterProperties.REPLAY_COUNT, "-4")))
                .containsEntry(DeadLetterProperties.REPLAY_COUNT, "0")
                .containsEntry("settle.input.settle.replay.count", "-4");
        assertThat(letter(Map.of())).doesNotContainKey(DeadLetterProperties.REPLAY_COUNT);
    }

    @Test
    void aReplayedCopyKeepsTheOriginalsOwnPropertiesAndCountsOneMoreReplay() {
        Map<String, String> letter = letter(Map.of("origin", "web", DeadLetterProperties.REAL_TOPIC, "elsewhere"));
        letter.put(DeadLetterProperties.REPLAY_COUNT, "2");

        assertThat(DeadLetterProperties.replayed(letter))
                .containsExactlyInAnyOrderEntriesOf(Map.of("origin", "web", DeadLetterProperties.REPLAY_COUNT, "3"));
    }

    @Test
    void theInstanceIsThePodNameTheChartSetsThenHostnameThenTheHostsName() {
        Map<String, String> pod = Map.of("POD_NAME", " orders-7d9f8c-x2x4q ", "HOSTNAME", "orders-host");
        Map<String, String> hostnameOnly = Map.of("POD_NAME", " ", "HOSTNAME", "orders-host");

        assertThat(DeadLetterProperties.instanceName(pod::get, () -> "laptop")).isEqualTo("orders-7d9f8c-x2x4q");
        assertThat(DeadLetterProperties.instanceName(hostnameOnly::get, () -> "laptop"))
                .isEqualTo("orders-host");
        assertThat(DeadLetterProperties.instanceName(name -> null, () -> "laptop"))
                .isEqualTo("laptop");
    }
}
