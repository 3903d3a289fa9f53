package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SettingsInForceTest {
    @Test
    void readsTheFirstConsumersSettingsFromSettlesEffectiveConfiguration() {
        String effective = "{\"client\":{\"serviceUrl\":\"pulsar://127.0.0.1:6650\",\"numIoThreads\":1},"
                + "\"subscriptions\":{\"noop\":{\"consumer\":{\"topicNames\":[\"persistent://public/default/a\"],"
                + "\"subscriptionName\":\"noop\",\"subscriptionType\":\"Shared\",\"receiverQueueSize\":1000,"
                + "\"ackTimeoutMillis\":0,\"negativeAckRedeliveryDelayMicros\":60000000,"
                + "\"acknowledgementsGroupTimeMicros\":0,\"batchIndexAckEnabled\":true,\"ackReceiptEnabled\":false,"
                + "\"poolMessages\":false,\"deadLetterPolicy\":{\"maxRedeliverCount\":4}},\"differences\":[],"
                + "\"producers\":[]}},\"transactions\":{\"ready\":true}}";

        Map<String, String> settings = SettingsInForce.fromEffective(effective);

        assertThat(settings)
                .containsExactly(
                        Map.entry("subscriptionType", "Shared"),
                        Map.entry("receiverQueueSize", "1000"),
                        Map.entry("acknowledgementsGroupTimeMicros", "0"),
                        Map.entry("batchIndexAckEnabled", "true"),
                        Map.entry("ackTimeoutMillis", "0"),
                        Map.entry("negativeAckRedeliveryDelayMicros", "60000000"),
                        Map.entry("ackReceiptEnabled", "false"),
                        Map.entry("poolMessages", "false"));
    }

    @Test
    void anAnswerWithoutAConsumerIsRefusedWithTheAnswer() {
        assertThatThrownBy(() -> SettingsInForce.fromEffective("{\"subscriptions\":{}}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no consumer")
                .hasMessageContaining("{\"subscriptions\":{}}");
    }

    @Test
    void aLoopsLineGivesBackItsSettingsInOrder() {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("subscriptionType", "Shared");
        settings.put("acknowledgementsGroupTimeMicros", "100000");

        String line = SettingsInForce.line(settings);

        assertThat(line).isEqualTo("SETTINGS subscriptionType=Shared acknowledgementsGroupTimeMicros=100000");
        assertThat(SettingsInForce.fromLine(line)).containsExactlyEntriesOf(settings);
        assertThat(SettingsInForce.describe(settings))
                .isEqualTo("subscriptionType Shared, acknowledgementsGroupTimeMicros 100000");
    }
}
