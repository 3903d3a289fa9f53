package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.benchmarks.Report.Goal;
import org.junit.jupiter.api.Test;

class ReportTest {

    @Test
    void aRowInRoundsPrintsTheSpreadTheRatiosSpreadAndTheRoundsThatMetItsGoal() {
        Report report = new Report();

        report.add(
                "no-op ack: throughput",
                Rounds.of(100, 210, 300, 400, 500),
                "%,.0f msg/s",
                Rounds.of(100, 200, 200, 500, 400),
                "loop %,.0f msg/s",
                Goal.ratio("≥ 1.0× loop", r -> r >= 1.0));

        assertThat(report.markdown())
                .contains("| no-op ack: throughput | 300 msg/s (100–500) | loop 200 msg/s (100–500) "
                        + "| 1.05× (0.80–1.50) | ≥ 1.0× loop | met, 4 of 5 rounds |");
        assertThat(report.rows().get(0).met()).contains(true);
    }

    @Test
    void aGoalOnSettlesOwnFigureIsJudgedOnItsRounds() {
        Report report = new Report("Settle, this tree", "Settle at main (0123456789ab)");

        report.add(
                "start-up",
                Rounds.of(1400, 1600, 1450),
                "%,.0f ms",
                Rounds.of(1300, 1300, 1300),
                "loop %,.0f ms",
                Goal.value("≤ 1.5 s", v -> v <= 1500));

        assertThat(report.markdown())
                .startsWith("| measurement | Settle, this tree | Settle at main (0123456789ab) | ratio | goal | |")
                .contains("| ≤ 1.5 s | **missed**, 2 of 3 rounds |");
    }

    @Test
    void aRowInRoundsWithNothingToCompareWithIsJudgedOnItsOwnRounds() {
        Report report = new Report();

        report.add("commit latency p99", Rounds.of(20, 31, 24, 22, 35), "%.1f ms", Goal.value("≤ 30 ms", v -> v <= 30));

        assertThat(report.markdown())
                .as("a median within the goal, but only 3 of 5 rounds")
                .contains("| commit latency p99 | 24.0 ms (20.0–35.0) |  |  | ≤ 30 ms | **missed**, 3 of 5 rounds |");
    }
}
