package dev.settle.runtime.canary;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class JudgeTest {
    private static Outcomes.Snapshot calls(long calls, long failures) {
        return new Outcomes.Snapshot(calls, failures, 0, 0, 0, 0, 1);
    }

    @Test
    void aStepIsNotJudgedUntilEachSideHasEnoughCalls() {
        var judged = Judge.judge(calls(199, 100), calls(5_000, 0), Thresholds.DEFAULTS);
        assertThat(judged.verdict()).isEqualTo(Judge.Verdict.NOT_ENOUGH_CALLS);
        assertThat(judged.why()).isEqualTo("not judged yet: 199 canary and 5000 current calls, 200 a side needed");
        assertThat(Judge.judge(calls(5_000, 0), calls(150, 0), Thresholds.DEFAULTS)
                        .verdict())
                .isEqualTo(Judge.Verdict.NOT_ENOUGH_CALLS);
    }

    @Test
    void aThirtyPercentFailureRateAgainstNoneRegressed() {
        var judged = Judge.judge(calls(200, 60), calls(4_000, 0), Thresholds.DEFAULTS);
        assertThat(judged.verdict()).isEqualTo(Judge.Verdict.REGRESSED);
        assertThat(judged.why())
                .isEqualTo("failure rate 30.0% against 0.0% (more than 5 points and 2x) over 200 canary and 4000"
                        + " current calls");
    }

    @Test
    void aRateMustPassBothTheMarginAndTheRatio() {
        // 6% against 2%: three times, but only 4 points more.
        assertThat(Judge.judge(calls(1_000, 60), calls(1_000, 20), Thresholds.DEFAULTS)
                        .verdict())
                .isEqualTo(Judge.Verdict.HEALTHY);
        // 40% against 30%: 10 points more, but not twice.
        assertThat(Judge.judge(calls(1_000, 400), calls(1_000, 300), Thresholds.DEFAULTS)
                        .verdict())
                .isEqualTo(Judge.Verdict.HEALTHY);
        // 61% against 30%: both.
        assertThat(Judge.judge(calls(1_000, 610), calls(1_000, 300), Thresholds.DEFAULTS)
                        .verdict())
                .isEqualTo(Judge.Verdict.REGRESSED);
    }

    @Test
    void retriesAreComparedApartAndNeverCountAsFailures() {
        var canary = new Outcomes.Snapshot(1_000, 0, 300, 0, 0, 0, 1);
        var judged = Judge.judge(canary, calls(1_000, 0), Thresholds.DEFAULTS);
        assertThat(judged.verdict()).isEqualTo(Judge.Verdict.REGRESSED);
        assertThat(judged.why()).startsWith("retry rate 30.0% against 0.0%").doesNotContain("failure rate");
        assertThat(canary.failureRate()).isZero();
    }

    @Test
    void aSlowerCanaryRegressedOnlyPastRatioAndFloor() {
        var slow = new Outcomes.Snapshot(1_000, 0, 0, 0, 0, 0, 120);
        var fast = new Outcomes.Snapshot(1_000, 0, 0, 0, 0, 0, 40);
        assertThat(Judge.judge(slow, fast, Thresholds.DEFAULTS).why())
                .startsWith("p99 handling time 120.0 ms against 40.0 ms");
        // 3x, but 2 ms more: noise.
        var quick = new Outcomes.Snapshot(1_000, 0, 0, 0, 0, 0, 3);
        assertThat(Judge.judge(quick, new Outcomes.Snapshot(1_000, 0, 0, 0, 0, 0, 1), Thresholds.DEFAULTS)
                        .verdict())
                .isEqualTo(Judge.Verdict.HEALTHY);
    }

    @Test
    void theHandlingTimeP99IsTheBucketBoundOfThe99thPercentile() {
        Outcomes outcomes = new Outcomes();
        for (int i = 0; i < 990; i++) {
            outcomes.returned(null, 1_000_000); // 1 ms
        }
        for (int i = 0; i < 10; i++) {
            outcomes.failed(100_000_000); // 100 ms
        }
        var snapshot = outcomes.snapshot();
        assertThat(snapshot.calls()).isEqualTo(1_000);
        assertThat(snapshot.failures()).isEqualTo(10);
        assertThat(snapshot.nones()).isEqualTo(990);
        // Within one bucket (a quarter of a doubling) above 1 ms.
        assertThat(snapshot.p99Millis()).isBetween(1.0, 1.2);
    }
}
