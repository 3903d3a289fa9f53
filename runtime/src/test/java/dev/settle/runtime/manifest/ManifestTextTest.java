package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The small parsers behind the manifest: durations, topic names, and "did you mean". */
class ManifestTextTest {
    @Test
    void durationsAreReadInEveryDocumentedForm() {
        assertThat(DurationText.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(DurationText.parse("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(DurationText.parse("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(DurationText.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(DurationText.parse("PT30S")).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void durationsMustBePositiveWholeMillisecondsWithAUnit() {
        assertThatThrownBy(() -> DurationText.parse("0s")).hasMessage("must be positive, was '0s'");
        assertThatThrownBy(() -> DurationText.parse("PT0.0001S")).hasMessageContaining("whole milliseconds");
        assertThatThrownBy(() -> DurationText.parse("30")).hasMessageContaining("with a unit");
        assertThatThrownBy(() -> DurationText.parse("-5s")).hasMessageContaining("must be a duration such as");
    }

    @Test
    void durationsPrintInTheirShortestForm() {
        assertThat(DurationText.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(DurationText.format(Duration.ofSeconds(90))).isEqualTo("90s");
        assertThat(DurationText.format(Duration.ofMinutes(2))).isEqualTo("2m");
        assertThat(DurationText.format(Duration.ofHours(3))).isEqualTo("3h");
    }

    @Test
    void measuredDurationsReadAtAGlance() {
        assertThat(DurationText.elapsed(Duration.ofMillis(250))).isEqualTo("250 ms");
        assertThat(DurationText.elapsed(Duration.ofMillis(1_549))).isEqualTo("1.5 s");
        assertThat(DurationText.elapsed(Duration.ofSeconds(60))).isEqualTo("60 s");
        assertThat(DurationText.elapsed(Duration.ofMinutes(5))).isEqualTo("300 s");
    }

    @Test
    void topicNamesAreExpandedToTheirFullForm() {
        assertThat(TopicName.parse("orders")).hasToString("persistent://public/default/orders");
        assertThat(TopicName.parse("acme/shop/orders")).hasToString("persistent://acme/shop/orders");
        assertThat(TopicName.parse("non-persistent://acme/shop/ticks")).hasToString("non-persistent://acme/shop/ticks");
    }

    @Test
    void malformedTopicNamesAreRefused() {
        for (String name : List.of(
                "acme/orders",
                "persistent://acme/orders",
                "persistent://a/b/c/d",
                "http://a/b/c",
                "persistent://a b/c/d",
                "persistent://a/b/")) {
            assertThatThrownBy(() -> TopicName.parse(name))
                    .as(name)
                    .hasMessageContaining("is not a valid Pulsar topic");
        }
    }

    @Test
    void nearMissesAreSuggestedAndStrangersAreNot() {
        List<String> types = List.of("Exclusive", "Failover", "Shared", "Key_Shared");
        assertThat(DidYouMean.closest("shared", types)).contains("Shared");
        assertThat(DidYouMean.closest("KeyShared", types)).contains("Key_Shared");
        assertThat(DidYouMean.closest("Broadcast", types)).isEmpty();
        assertThat(DidYouMean.closest("maxAttemps", ManifestKey.Level.SUBSCRIPTION.names()))
                .contains("maxAttempts");
        assertThat(DidYouMean.closest("xyz", ManifestKey.Level.SUBSCRIPTION.names()))
                .isEmpty();
    }
}
