package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.pulsar.client.api.DeadLetterPolicy;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.conf.ConsumerConfigurationData;
import org.junit.jupiter.api.Test;

/**
 * The consumer settings in force are compared with the manifest's, one by one, in the client's own names: a setting
 * the client runs with another value is named with both (what {@code settle_config_differences} counts).
 */
class SettingsInForceTest {
    private static final String TOPIC = "persistent://public/default/orders";
    private static final String LETTERS = "persistent://public/default/orders-dlq";

    private static SubscriptionSpec.Builder spec() {
        return SubscriptionSpec.builder("orders", List.of(TOPIC))
                .type(SubscriptionKind.KEY_SHARED)
                .ackTimeout(Duration.ofSeconds(30))
                .deadLetter(5, LETTERS);
    }

    /** What a client that honours every setting of {@link #spec()} runs with. */
    private static ConsumerConfigurationData<Object> honoured() {
        ConsumerConfigurationData<Object> conf = new ConsumerConfigurationData<>();
        conf.setSubscriptionName("orders");
        conf.setSubscriptionType(SubscriptionType.Key_Shared);
        conf.setSubscriptionInitialPosition(SubscriptionInitialPosition.Earliest);
        conf.setReceiverQueueSize(1000);
        conf.setAckTimeoutMillis(30_000);
        conf.setBatchIndexAckEnabled(false);
        conf.setTopicNames(Set.of(TOPIC));
        conf.setDeadLetterPolicy(DeadLetterPolicy.builder()
                .maxRedeliverCount(4)
                .deadLetterTopic(LETTERS)
                .build());
        return conf;
    }

    @Test
    void aConsumerRunningWhatTheManifestSaysHasNoDifference() {
        assertThat(EffectiveConfiguration.differences(spec().build(), honoured()))
                .isEmpty();
    }

    @Test
    void eachSettingRunWithAnotherValueIsNamedWithBoth() {
        ConsumerConfigurationData<Object> conf = honoured();
        conf.setReceiverQueueSize(0);
        conf.setAckTimeoutMillis(0);
        conf.setDeadLetterPolicy(null);

        assertThat(EffectiveConfiguration.differences(spec().build(), conf))
                .extracting(Object::toString)
                .containsExactly(
                        "receiverQueueSize is 0 where the manifest says 1000",
                        "ackTimeoutMillis is 0 where the manifest says 30000",
                        "deadLetterPolicy.maxRedeliverCount is null where the manifest says 4",
                        "deadLetterPolicy.deadLetterTopic is null where the manifest says " + LETTERS);
    }

    /** At exactly-once Settle writes every letter: a client policy there would be a difference, and its absence none. */
    @Test
    void atExactlyOnceTheConsumerHasNoDeadLetterPolicy() {
        SubscriptionSpec exactlyOnce = spec().guarantee(Guarantee.EXACTLY_ONCE).build();
        ConsumerConfigurationData<Object> conf = honoured();

        assertThat(EffectiveConfiguration.differences(exactlyOnce, conf))
                .extracting(EffectiveConfiguration.Difference::setting)
                .containsExactly("deadLetterPolicy.maxRedeliverCount", "deadLetterPolicy.deadLetterTopic");
        conf.setDeadLetterPolicy(null);
        assertThat(EffectiveConfiguration.differences(exactlyOnce, conf)).isEmpty();
    }

    @Test
    void theWatchCountsTheLiveConsumersDifferencesAndNoneBeforeItSubscribed() {
        assertThat(EffectiveConfiguration.watch(spec().build(), Optional::empty).getAsInt())
                .isZero();
    }
}
