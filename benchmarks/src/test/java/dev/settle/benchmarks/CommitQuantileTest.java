package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class CommitQuantileTest {
    /** 100 commits: 40 up to 5 ms, 50 more up to 10 ms, 10 more up to 25 ms. */
    private static final String METRICS = """
            # TYPE settle_transaction_commit_duration_seconds histogram
            settle_transaction_commit_duration_seconds_bucket{subscription="s",le="0.001"} 0
            settle_transaction_commit_duration_seconds_bucket{subscription="s",le="0.005"} 40
            settle_transaction_commit_duration_seconds_bucket{subscription="s",le="0.01"} 90
            settle_transaction_commit_duration_seconds_bucket{subscription="s",le="0.025"} 100
            settle_transaction_commit_duration_seconds_bucket{subscription="s",le="+Inf"} 100
            settle_transaction_commit_duration_seconds_count{subscription="s"} 100
            """;

    @Test
    void aQuantileIsInterpolatedWithinItsBucketAsHistogramQuantileDoes() {
        // The 50th of 100 is the 10th of the 50 between 5 and 10 ms: 5 + 5 × 10/50 = 6 ms.
        assertThat(Benchmarks.commitQuantile(METRICS, 0.5)).isCloseTo(0.006, within(1e-9));
        // The 99th is the 9th of the 10 between 10 and 25 ms: 10 + 15 × 9/10 = 23.5 ms.
        assertThat(Benchmarks.commitQuantile(METRICS, 0.99)).isCloseTo(0.0235, within(1e-9));
    }

    @Test
    void theCommitsOfAStretchAreTheLaterReadLessTheEarlierBucketByBucket() {
        // The warm-up's 100 (METRICS), then 100 more: 10 within 5 ms, 10 more within 10 ms, 80 more within 25 ms.
        String later = METRICS.replace("le=\"0.005\"} 40", "le=\"0.005\"} 50")
                .replace("le=\"0.01\"} 90", "le=\"0.01\"} 110")
                .replace("le=\"0.025\"} 100", "le=\"0.025\"} 200")
                .replace("le=\"+Inf\"} 100", "le=\"+Inf\"} 200");
        var stretch = Benchmarks.commitsBetween(METRICS, later);

        assertThat(stretch.values()).containsExactly(0.0, 10.0, 20.0, 100.0, 100.0);
        // Alone, the stretch's median is the 30th of its 80 between 10 and 25 ms: 10 + 15 × 30/80 = 15.625 ms; over
        // both reads it would be 10 ms or less (110 of 200 within 10 ms).
        assertThat(Benchmarks.quantile(stretch, 0.5)).isCloseTo(0.015625, within(1e-9));
        assertThat(Benchmarks.commitQuantile(later, 0.5)).isLessThanOrEqualTo(0.010);
    }

    @Test
    void noCommitsGiveNoFigure() {
        assertThat(Benchmarks.commitQuantile("", 0.5)).isNaN();
    }
}
