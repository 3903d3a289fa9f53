package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.canary.Thresholds;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class RampTest {
    private static final Instant AT = Instant.parse("2026-12-05T10:00:00Z");
    private static final String SHA = "a".repeat(64);

    private static CodeStore.State state(Ramp ramp) {
        return new CodeStore.State(
                3,
                "",
                List.of(
                        new GenerationRecord(3, SHA, "test.Handler", GenerationRecord.Source.UPLOAD, AT),
                        new GenerationRecord(4, "b".repeat(64), "test.Handler", GenerationRecord.Source.UPLOAD, AT)),
                Optional.of(ramp));
    }

    private static Ramp ramp() {
        return Ramp.start(4, List.of(5, 25, 100), Duration.ofSeconds(60), AT, Thresholds.DEFAULTS);
    }

    @Test
    void aRampIsReadBackFromItsRecordAsItWasWritten() {
        CodeStore.State written = state(ramp().atStep(25, AT.plusSeconds(60)));
        assertThat(CodeStore.State.of(written.properties())).isEqualTo(written);
        CodeStore.State ended = state(ramp().ended(Ramp.Status.ROLLED_BACK, "failure rate 30.0% against 0.0%", AT));
        assertThat(CodeStore.State.of(ended.properties())).isEqualTo(ended);
    }

    @Test
    void aRecordWithoutARampHasNone() {
        CodeStore.State plain = new CodeStore.State(3, "", state(ramp()).kept());
        assertThat(CodeStore.State.of(plain.properties()).ramp()).isEmpty();
    }

    @Test
    void theStepsAdvanceOnTheirScheduleAndEndAtAll() {
        Ramp started = ramp();
        assertThat(started.percent()).isEqualTo(5);
        assertThat(started.stepDue(AT.plusSeconds(59))).isFalse();
        assertThat(started.stepDue(AT.plusSeconds(60))).isTrue();
        assertThat(started.nextPercent()).isEqualTo(25);
        assertThat(started.atStep(25, AT).nextPercent()).isEqualTo(100);
        Ramp byCommand = Ramp.start(4, List.of(5, 100), Duration.ZERO, AT, Thresholds.DEFAULTS);
        assertThat(byCommand.stepDue(AT.plusSeconds(1_000_000))).isFalse();
    }

    private static Properties with(String field, String value) {
        Properties properties = state(ramp()).properties();
        if (value == null) {
            properties.remove(field);
        } else {
            properties.setProperty(field, value);
        }
        return properties;
    }

    @Test
    void eachMalformedFieldIsRefusedByName() {
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.percent", "7")))
                .hasMessage("ramp.percent must be one of ramp.steps [5, 25, 100], was 7");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.steps", "5,25,90")))
                .hasMessage("ramp.steps must end at 100 (the canary then serves all keys), was [5, 25, 90]");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.steps", "25,5,100")))
                .hasMessageStartingWith("ramp.steps must be whole percents from 1 to 100, each above the one before");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.steps", "5,x,100")))
                .hasMessage("ramp.steps must be a whole number, was 'x'");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.status", "WINNING")))
                .hasMessage("ramp.status must be RUNNING, PROMOTED, ROLLED_BACK or ABORTED, was 'WINNING'");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.stepEvery", "60s")))
                .hasMessage("ramp.stepEvery must be a duration such as PT60S, was '60s'");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.stepStartedAt", null)))
                .hasMessageStartingWith("ramp.stepStartedAt must be a time");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.minCalls", "0")))
                .hasMessage("ramp thresholds: minCalls must be 1 or more, was 0");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.rateRatio", "NaN")))
                .hasMessage("ramp.rateRatio must be a number, was 'NaN'");
    }

    @Test
    void aRunningRampMustNameAKeptGenerationOtherThanTheActiveOne() {
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.generation", "3")))
                .hasMessage("ramp.generation must be a kept generation other than the active one (3), was 3");
        assertThatThrownBy(() -> CodeStore.State.of(with("ramp.generation", "9")))
                .hasMessage("ramp.generation must be a kept generation other than the active one (3), was 9");
        // An ended ramp may name a generation no longer kept.
        Properties ended =
                state(ramp().ended(Ramp.Status.ABORTED, "aborted", AT)).properties();
        ended.setProperty("ramp.generation", "1");
        assertThat(CodeStore.State.of(ended).ramp()).isPresent();
    }
}
