package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.SubscriptionKind;
import org.junit.jupiter.api.Test;

class UnackedLimitTest {
    private final RecordingMetrics metrics = new RecordingMetrics();

    @Test
    void reachingTheBrokersDefaultLimitIsReportedOnceAndClearedBelowHalf() {
        UnackedLimit limit = UnackedLimit.of("orders", SubscriptionKind.SHARED, metrics);

        limit.held(49_999);
        assertThat(metrics.unackedLimit).isEmpty();
        limit.held(50_000);
        limit.held(50_001);
        limit.held(30_000);
        assertThat(metrics.unackedLimit).containsExactly(true);
        limit.held(24_999);
        limit.held(10);
        assertThat(metrics.unackedLimit).containsExactly(true, false);
        limit.held(50_000);
        assertThat(metrics.unackedLimit).containsExactly(true, false, true);
    }

    @Test
    void messagesHeldBehindTheirKeyCountTowardTheLimitWithTheHeldRetries() {
        UnackedLimit limit = UnackedLimit.of("orders", SubscriptionKind.KEY_SHARED, metrics);

        limit.held(30_000);
        limit.heldBehindKeyChanged(19_999);
        assertThat(metrics.unackedLimit).isEmpty();
        limit.heldBehindKeyChanged(1);
        assertThat(metrics.unackedLimit).containsExactly(true);
        limit.held(0);
        limit.heldBehindKeyChanged(-1);
        assertThat(metrics.unackedLimit).containsExactly(true, false);
    }

    @Test
    void keySharedHasTheLimitToo() {
        UnackedLimit.of("orders", SubscriptionKind.KEY_SHARED, metrics).held(UnackedLimit.BROKER_DEFAULT);

        assertThat(metrics.unackedLimit).containsExactly(true);
    }

    @Test
    void exclusiveAndFailoverHaveNoPerConsumerLimitToReport() {
        UnackedLimit.of("orders", SubscriptionKind.EXCLUSIVE, metrics).held(1_000_000);
        UnackedLimit.of("orders", SubscriptionKind.FAILOVER, metrics).held(1_000_000);

        assertThat(metrics.unackedLimit).isEmpty();
    }
}
