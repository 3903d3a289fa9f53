package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class RoundsTest {

    @Test
    void aComparisonOfTwoBuildsRunsAnEvenNumberOfRoundsSoEachGoesFirstAsOftenAsTheOther() {
        assertThat(Benchmarks.rounds(Sizes.QUICK, true)).isEqualTo(4);
        assertThat(Benchmarks.rounds(Sizes.FULL, true)).isEqualTo(6);
        assertThat(Benchmarks.rounds(Sizes.SMOKE, true)).isEqualTo(2);
        // Against the loop (and LocalRunner) the mode's own: the goals count 4 of 5 (3 of 3) rounds.
        assertThat(Benchmarks.rounds(Sizes.QUICK, false)).isEqualTo(3);
        assertThat(Benchmarks.rounds(Sizes.FULL, false)).isEqualTo(5);
    }

    @Test
    void theSpreadIsTheLeastTheMedianAndTheMostWhateverOrderTheRoundsRanIn() {
        Rounds rounds = Rounds.of(120_000, 95_000, 130_000, 101_000, 99_000);

        assertThat(rounds.min()).isEqualTo(95_000);
        assertThat(rounds.median()).isEqualTo(101_000);
        assertThat(rounds.max()).isEqualTo(130_000);
        assertThat(Rounds.of(4, 1, 3, 2).median()).isEqualTo(2.5);
    }

    @Test
    void aRatioIsTakenRoundByRoundAgainstTheSameRoundsBase() {
        // Each round's pair ran back to back: the broker warming from round to round moves both alike.
        Rounds settle = Rounds.of(100, 200, 300);
        Rounds loop = Rounds.of(100, 250, 200);

        Rounds ratios = settle.over(loop);

        assertThat(ratios.min()).isCloseTo(0.8, within(1e-9));
        assertThat(ratios.median()).isCloseTo(1.0, within(1e-9));
        assertThat(ratios.max()).isCloseTo(1.5, within(1e-9));
    }

    @Test
    void aBaseOfZeroGivesNoRatioAndMeetsNoGoal() {
        Rounds ratios = Rounds.of(5).over(Rounds.of(0));

        assertThat(ratios.median()).isNaN();
        assertThat(ratios.judge(r -> r <= 1.0).met()).isFalse();
    }

    @Test
    void aRatioOfZeroToZeroPrintsAsADash() {
        Rounds ratios = Rounds.of(0, 0, 0).over(Rounds.of(0, 0, 0));

        assertThat(ratios.text("%.2f×")).isEqualTo("–");
    }

    @Test
    void roundsOfDifferentCountsCannotBeCompared() {
        assertThatThrownBy(() -> Rounds.of(1, 2).over(Rounds.of(1, 2, 3)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("2 against 3");
    }

    @Test
    void aGoalIsMetWhenTheMedianMeetsItAndFourOfFiveRoundsDo() {
        Rounds fourOfFive = Rounds.of(1.02, 0.97, 1.10, 1.01, 1.05);

        assertThat(fourOfFive.judge(r -> r >= 1.0)).isEqualTo(new Rounds.Verdict(true, 4, 5));
    }

    @Test
    void aMedianThatMeetsTheGoalIsNotEnoughWhenOnlyThreeOfFiveRoundsDo() {
        Rounds threeOfFive = Rounds.of(1.02, 0.97, 1.10, 0.99, 1.05);

        assertThat(threeOfFive.median()).isGreaterThanOrEqualTo(1.0);
        assertThat(threeOfFive.judge(r -> r >= 1.0)).isEqualTo(new Rounds.Verdict(false, 3, 5));
    }

    @Test
    void theRoundsNeededAreEightyPercentAtLeastOne() {
        assertThat(Rounds.needed(5)).isEqualTo(4);
        assertThat(Rounds.needed(3)).isEqualTo(3);
        assertThat(Rounds.needed(1)).isEqualTo(1);
        assertThat(Rounds.needed(10)).isEqualTo(8);
        assertThat(Rounds.needed(7)).isEqualTo(6);
    }

    @Test
    void theTextGivesTheMedianInItsFormatThenTheLeastAndMostInItsNumbersFormat() {
        assertThat(Rounds.of(12_345, 11_020, 13_480).text("loop %,.0f msg/s"))
                .isEqualTo("loop 12,345 msg/s (11,020–13,480)");
        assertThat(Rounds.of(4.04, 3.96, 5.0).text("%.1f µs")).isEqualTo("4.0 µs (4.0–5.0)");
        assertThat(Rounds.of(7.0).text("%.1f µs")).isEqualTo("7.0 µs");
    }

    @Test
    void theVerdictSaysHowManyRoundsMetTheGoal() {
        assertThat(new Rounds.Verdict(true, 5, 5).text()).isEqualTo("met, 5 of 5 rounds");
        assertThat(new Rounds.Verdict(false, 3, 5).text()).isEqualTo("**missed**, 3 of 5 rounds");
        assertThat(new Rounds.Verdict(true, 1, 1).text()).isEqualTo("met, 1 of 1 round");
    }

    @Test
    void noRoundsIsNoFigure() {
        assertThatThrownBy(Rounds::of).isInstanceOf(IllegalArgumentException.class);
    }
}
