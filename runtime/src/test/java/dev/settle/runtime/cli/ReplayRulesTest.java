package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.driver.DeadLetterProperties;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplayRulesTest {
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
    void aReplayKeepsTheOriginalsPropertiesAndCountsOneMore() {
        ReplayRules.Decision decision = ReplayRules.of(List.of(), 3).decide(letter("handler", "1"));

        assertThat(decision.action()).isEqualTo(ReplayRules.Action.REPLAY);
        assertThat(decision.topic()).contains("persistent://public/default/orders");
        assertThat(decision.properties())
                .containsExactlyInAnyOrderEntriesOf(Map.of("origin", "web", DeadLetterProperties.REPLAY_COUNT, "2"));
    }

    @Test
    void aReplayCarriesTheDeadLettersTraceContextSoTheTraceGoesOn() {
        Map<String, String> letter = letter("handler", null);
        // Settle's dead letter carries its own span's context over the original's (docs/observability.md, "Traces").
        letter.put("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        letter.put("tracestate", "vendor=1");

        assertThat(ReplayRules.of(List.of(), 3).decide(letter).properties())
                .containsEntry("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
                .containsEntry("tracestate", "vendor=1");
    }

    @Test
    void aLetterReplayedMaxReplaysTimesIsParkedAsItIs() {
        Map<String, String> third = letter("handler", "3");

        ReplayRules.Decision decision = ReplayRules.of(List.of(), 3).decide(third);

        assertThat(decision.action()).isEqualTo(ReplayRules.Action.PARK);
        assertThat(decision.properties()).isEqualTo(third);
        assertThat(ReplayRules.of(List.of(), 4).decide(third).action()).isEqualTo(ReplayRules.Action.REPLAY);
    }

    @Test
    void whereMatchesOneValueOfEachKeyGivenAndStageNoneIsTheClientsLetters() {
        ReplayRules handlerOrDecode = ReplayRules.of(List.of("stage=handler", "stage=decode"), 3);
        assertThat(handlerOrDecode.decide(letter("handler", null)).action()).isEqualTo(ReplayRules.Action.REPLAY);
        assertThat(handlerOrDecode.decide(letter("output", null)).action()).isEqualTo(ReplayRules.Action.SKIP);

        ReplayRules both = ReplayRules.of(List.of("stage=handler", "exception=java.io.IOException"), 3);
        assertThat(both.decide(letter("handler", null)).action()).isEqualTo(ReplayRules.Action.SKIP);

        ReplayRules client = ReplayRules.of(List.of("stage=none"), 3);
        assertThat(client.decide(letter(null, null)).action()).isEqualTo(ReplayRules.Action.REPLAY);
        assertThat(client.decide(letter("handler", null)).action()).isEqualTo(ReplayRules.Action.SKIP);
    }

    @Test
    void aLetterWithNoRealTopicIsLeft() {
        Map<String, String> nowhere = letter("handler", null);
        nowhere.remove(DeadLetterProperties.REAL_TOPIC);

        assertThat(ReplayRules.of(List.of(), 3).decide(nowhere).action()).isEqualTo(ReplayRules.Action.UNREPLAYABLE);
    }

    @Test
    void aConditionOfAnotherKeyIsRefusedNamingTheOnesThereAre() {
        assertThatThrownBy(() -> ReplayRules.of(List.of("attempts=3"), 3))
                .hasMessageStartingWith("--where 'attempts=3': say stage=STAGE")
                .hasMessageContaining("exception=CLASS");
        assertThatThrownBy(() -> ReplayRules.of(List.of(), 0)).hasMessage("--max-replays must be at least 1, was 0");
    }
}
