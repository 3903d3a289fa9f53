package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.canary.Thresholds;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The rule of the record's fence ({@link FleetRecords#unchangedSince}): a write goes through only when the latest
 * record is the one the change was made from. With every runtime judging a ramp, two of them write its next step at
 * about the same time, both from the record at the step before; the second must lose and follow the first.
 */
class RecordFenceTest {
    private static final Instant AT = Instant.parse("2026-12-05T10:00:00Z");

    private static CodeStore.State state(Optional<Ramp> ramp) {
        return new CodeStore.State(
                3,
                "",
                List.of(
                        new GenerationRecord(3, "a".repeat(64), "test.Handler", GenerationRecord.Source.UPLOAD, AT),
                        new GenerationRecord(4, "b".repeat(64), "test.Handler", GenerationRecord.Source.UPLOAD, AT)),
                ramp);
    }

    private static Ramp atFivePercent() {
        return Ramp.start(4, List.of(5, 25, 100), Duration.ofSeconds(10), AT, Thresholds.DEFAULTS);
    }

    @Test
    void aSecondWriterOfTheSameStepLosesToTheFirst() {
        Optional<CodeStore.State> basis = Optional.of(state(Optional.of(atFivePercent())));
        CodeStore.State firstWriters = state(Optional.of(atFivePercent().atStep(25, AT.plusSeconds(10))));
        assertThat(FleetRecords.unchangedSince(Optional.of(firstWriters), basis))
                .as("the record is at 25%% since the second writer judged 5%%")
                .isFalse();
    }

    @Test
    void aStepJudgedOnOlderCountsDoesNotOverwriteARollback() {
        Optional<CodeStore.State> basis = Optional.of(state(Optional.of(atFivePercent())));
        CodeStore.State rolledBack = state(Optional.of(
                atFivePercent().ended(Ramp.Status.ROLLED_BACK, "failure rate 30.0% against 0.0%", AT.plusSeconds(4))));
        assertThat(FleetRecords.unchangedSince(Optional.of(rolledBack), basis)).isFalse();
    }

    @Test
    void aRampStartedSinceIsAChange() {
        assertThat(FleetRecords.unchangedSince(
                        Optional.of(state(Optional.of(atFivePercent()))), Optional.of(state(Optional.empty()))))
                .isFalse();
    }

    @Test
    void theRecordTheChangeWasMadeFromLetsTheWriteThrough() {
        CodeStore.State record = state(Optional.of(atFivePercent()));
        assertThat(FleetRecords.unchangedSince(
                        Optional.of(record), Optional.of(CodeStore.State.of(record.properties()))))
                .isTrue();
        assertThat(FleetRecords.unchangedSince(Optional.empty(), Optional.empty()))
                .isTrue();
    }

    @Test
    void anotherUploadSinceIsAChangeAsBefore() {
        CodeStore.State basis = state(Optional.empty());
        CodeStore.State uploaded = new CodeStore.State(
                5,
                "",
                List.of(new GenerationRecord(5, "c".repeat(64), "test.Handler", GenerationRecord.Source.UPLOAD, AT)));
        assertThat(FleetRecords.unchangedSince(Optional.of(uploaded), Optional.of(basis)))
                .isFalse();
        assertThat(FleetRecords.unchangedSince(Optional.empty(), Optional.of(basis)))
                .isFalse();
    }
}
