package dev.settle.runtime.deadletter;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The delay topic is untrusted input: what a copy carries, and what is refused or only raised when read back. */
class DelayCopyTest {
    private static final List<String> TOPICS =
            List.of("persistent://public/default/orders", "persistent://public/default/refunds");

    @Test
    void aCopyKeepsTheOriginalsPropertiesAndCarriesItsOriginAndTheAttemptsMade() {
        Map<String, String> copy = DelayCopy.properties(
                Map.of("traceparent", "00-abc-def-01", "tenant", "acme"),
                "persistent://public/default/orders@12:3:-1",
                1);

        assertThat(copy)
                .containsEntry("traceparent", "00-abc-def-01")
                .containsEntry("tenant", "acme")
                .containsEntry("settle.origin", "persistent://public/default/orders@12:3:-1")
                .containsEntry("settle.attempts", "1");
    }

    @Test
    void aCopyOfACopySetsItsOwnAttemptsOverWhatItCarried() {
        Map<String, String> copy = DelayCopy.properties(
                Map.of("settle.attempts", "1", "settle.origin", "forged"),
                "persistent://public/default/orders@12:3:-1",
                3);

        assertThat(copy)
                .containsEntry("settle.attempts", "3")
                .containsEntry("settle.origin", "persistent://public/default/orders@12:3:-1");
    }

    @Test
    void aCopyIsOnTheAttemptAfterThoseItCarriesPlusTheBrokersCountOfItsOwn() {
        assertThat(DelayCopy.attempt(Map.of("settle.attempts", "1"), 0)).isEqualTo(2);
        assertThat(DelayCopy.attempt(Map.of("settle.attempts", "3"), 2)).isEqualTo(6);
    }

    @Test
    void aForgedAttemptCountCanOnlyRaiseTheBrokersCount() {
        for (String forged : List.of("-5", "+2", " 2", "two", "", "1234567890", "0x10")) {
            assertThat(DelayCopy.attempt(Map.of("settle.attempts", forged), 3))
                    .as("settle.attempts '%s'", forged)
                    .isEqualTo(4);
        }
        assertThat(DelayCopy.attempt(Map.of(), 0)).isEqualTo(1);
        assertThat(DelayCopy.attempt(Map.of("settle.attempts", "999999999"), 0))
                .as("raised: the cap comes at once")
                .isEqualTo(1_000_000_000);
        assertThat(DelayCopy.attempt(Map.of("settle.attempts", "999999999"), Integer.MAX_VALUE))
                .as("no overflow")
                .isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void aCopyOfOneOfTheSubscriptionsTopicsOrOfAPartitionOfOneIsTaken() {
        assertThat(DelayCopy.refusal(Map.of("settle.origin", "persistent://public/default/refunds@1:2:-1"), TOPICS))
                .isEmpty();
        assertThat(DelayCopy.refusal(
                        Map.of("settle.origin", "persistent://public/default/orders-partition-3@1:2:3"), TOPICS))
                .isEmpty();
    }

    @Test
    void aCopyWhoseOriginIsAnotherTopicIsRefusedNamingTheValue() {
        assertThat(DelayCopy.refusal(Map.of("settle.origin", "persistent://public/default/payments@1:2:-1"), TOPICS))
                .hasValueSatisfying(why -> assertThat(why)
                        .contains("'persistent://public/default/payments@1:2:-1'")
                        .contains("names topic 'persistent://public/default/payments'")
                        .contains("not one of the subscription's topics"));
        assertThat(DelayCopy.refusal(
                        Map.of("settle.origin", "persistent://public/default/orders-archive@1:2:-1"), TOPICS))
                .as("a topic whose name only starts with a subscription's")
                .isPresent();
    }

    @Test
    void aMessageWithoutAnOriginOrWithAnUnreadableOneIsRefused() {
        assertThat(DelayCopy.refusal(Map.of(), TOPICS))
                .hasValueSatisfying(why -> assertThat(why).contains("no settle.origin"));
        Map<String, String> blank = new HashMap<>();
        blank.put("settle.origin", " ");
        assertThat(DelayCopy.refusal(blank, TOPICS)).isPresent();
        for (String unreadable :
                List.of("persistent://public/default/orders", "@1:2:3", "persistent://public/default/orders@")) {
            assertThat(DelayCopy.refusal(Map.of("settle.origin", unreadable), TOPICS))
                    .as(unreadable)
                    .hasValueSatisfying(why -> assertThat(why).contains("is not topic@messageId"));
        }
        assertThat(DelayCopy.refusal(Map.of("settle.origin", "evil\n[INFO] forged line@1:2"), TOPICS))
                .hasValueSatisfying(why -> assertThat(why).doesNotContain("\n").contains("\\n"));
    }

    @Test
    void anOriginIsReadAsItsTopicAndMessageId() {
        assertThat(DelayCopy.topicOf("persistent://public/default/orders@12:3:-1"))
                .isEqualTo("persistent://public/default/orders");
        assertThat(DelayCopy.messageIdOf("persistent://public/default/orders@12:3:-1"))
                .isEqualTo("12:3:-1");
    }
}
