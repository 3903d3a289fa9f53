package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StatsTest {

    @Test
    void percentileIsTheNearestRank() {
        long[] samples = new long[100];
        for (int i = 0; i < samples.length; i++) {
            samples[i] = 100 - i;
        }
        assertThat(Stats.percentile(samples.clone(), 50)).isEqualTo(50);
        assertThat(Stats.percentile(samples.clone(), 99)).isEqualTo(99);
        assertThat(Stats.percentile(samples.clone(), 100)).isEqualTo(100);
        assertThat(Stats.percentile(new long[] {7}, 99)).isEqualTo(7);
    }

    @Test
    void medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        assertThat(Stats.median(new double[] {3, 1, 2})).isEqualTo(2);
        assertThat(Stats.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
    }
}
