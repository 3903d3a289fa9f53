package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code durableDelays}: its threshold, its topic's name, and where a subscription cannot have it. */
class DurableDelaysTest {
    @Test
    void aWaitOfAtLeastDurableAfterIsKeptOnTheTopicAShorterOneIsNot() {
        DurableDelays delays = new DurableDelays("persistent://public/default/orders-delay", Duration.ofSeconds(5));

        assertThat(delays.keeps(Duration.ofSeconds(5))).isTrue();
        assertThat(delays.keeps(Duration.ofSeconds(30))).isTrue();
        assertThat(delays.keeps(Duration.ofMillis(4_999))).isFalse();
    }

    @Test
    void theDelayTopicIsTheSubscriptionsNameInTheFirstTopicsNamespaceAndPersistent() {
        assertThat(DurableDelays.topicFor("persistent://acme/shop/orders", "billing"))
                .isEqualTo("persistent://acme/shop/billing-delay");
        assertThat(DurableDelays.topicFor("non-persistent://acme/shop/orders", "billing"))
                .isEqualTo("persistent://acme/shop/billing-delay");
        assertThat(DurableDelays.topicFor("orders", "billing")).isEqualTo("persistent://public/default/billing-delay");
    }

    @Test
    void offByDefault() {
        assertThat(SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .build()
                        .retries()
                        .durableDelays())
                .isEmpty();
    }

    @Test
    void aSubscriptionWhereTheBrokerDelaysNothingCannotHaveThem() {
        assertThatThrownBy(() -> SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.FAILOVER)
                        .durableDelays(Duration.ofSeconds(5))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Shared and Key_Shared only");
    }
}
