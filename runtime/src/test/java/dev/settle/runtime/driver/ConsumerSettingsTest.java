package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.impl.ConsumerBuilderImpl;
import org.apache.pulsar.client.impl.conf.ConsumerConfigurationData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the consumer is actually configured with, read back from the client's own configuration object. A client
 * upgrade that changes a default under us fails here.
 */
class ConsumerSettingsTest {
    private static PulsarClient client;

    @BeforeAll
    static void client() throws Exception {
        // Building a client does not connect; nothing here needs a broker.
        client = PulsarClient.builder().serviceUrl("pulsar://127.0.0.1:6650").build();
    }

    @AfterAll
    static void close() throws Exception {
        client.close();
    }

    private static ConsumerConfigurationData<?> conf(SubscriptionSpec spec) {
        return ((ConsumerBuilderImpl<?>) ConsumerSettings.builder(client, Schema.STRING, spec)).getConf();
    }

    private static SubscriptionSpec.Builder spec(SubscriptionKind type) {
        return SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(type);
    }

    @Test
    void aDeadLetterPolicyDoesNotTurnOnAnAckTimeout() {
        ConsumerConfigurationData<?> conf = conf(spec(SubscriptionKind.SHARED)
                .deadLetter(5, "persistent://public/default/orders-dlq")
                .build());

        // Clients before Pulsar 3.0 set 30 s here (apache/pulsar#19486).
        assertThat(conf.getAckTimeoutMillis()).isZero();
        assertThat(conf.getDeadLetterPolicy().getMaxRedeliverCount()).isEqualTo(4);
        assertThat(conf.getDeadLetterPolicy().getDeadLetterTopic()).isEqualTo("persistent://public/default/orders-dlq");
        assertThat(conf.getDeadLetterPolicy().getInitialSubscriptionName()).isEqualTo("orders-dlq");
    }

    /** Settle writes every letter of an exactly-once subscription in a transaction: the client must never write one. */
    @Test
    void anExactlyOnceSubscriptionsConsumerHasNoDeadLetterPolicyOfItsOwn() {
        ConsumerConfigurationData<?> conf = conf(spec(SubscriptionKind.SHARED)
                .guarantee(Guarantee.EXACTLY_ONCE)
                .deadLetter(5, "persistent://public/default/orders-dlq")
                .build());

        assertThat(conf.getDeadLetterPolicy()).isNull();
        assertThat(conf.getAckTimeoutMillis()).isZero();
    }

    @Test
    void theAckTimeoutIsExactlyTheManifests() {
        assertThat(conf(spec(SubscriptionKind.SHARED)
                                .ackTimeout(Duration.ofMillis(2500))
                                .build())
                        .getAckTimeoutMillis())
                .isEqualTo(2500);
        assertThat(conf(spec(SubscriptionKind.SHARED).build()).getAckTimeoutMillis())
                .isZero();
    }

    @Test
    void retryIsRedeliveredThroughAZeroBackoff() {
        ConsumerConfigurationData<?> conf = conf(spec(SubscriptionKind.SHARED).build());

        assertThat(conf.getNegativeAckRedeliveryBackoff()).isSameAs(ZeroRedeliveryBackoff.INSTANCE);
        assertThat(conf.getNegativeAckRedeliveryBackoff().next(7)).isZero();
    }

    @Test
    void batchIndexAcknowledgementFollowsTheManifest() {
        assertThat(conf(spec(SubscriptionKind.SHARED).build()).isBatchIndexAckEnabled())
                .isFalse();
        assertThat(conf(spec(SubscriptionKind.SHARED).batchIndexAck(true).build())
                        .isBatchIndexAckEnabled())
                .isTrue();
    }

    @Test
    void acknowledgementsAreGroupedExceptWithBatchIndexAckAndACap() {
        String deadLetters = "persistent://public/default/orders-dlq";
        assertThat(conf(spec(SubscriptionKind.SHARED).build()).getAcknowledgementsGroupTimeMicros())
                .isEqualTo(100_000);
        assertThat(conf(spec(SubscriptionKind.SHARED).batchIndexAck(true).build())
                        .getAcknowledgementsGroupTimeMicros())
                .isEqualTo(100_000);
        assertThat(conf(spec(SubscriptionKind.SHARED).deadLetter(3, deadLetters).build())
                        .getAcknowledgementsGroupTimeMicros())
                .isEqualTo(100_000);
        assertThat(conf(spec(SubscriptionKind.SHARED)
                                .batchIndexAck(true)
                                .deadLetter(3, deadLetters)
                                .build())
                        .getAcknowledgementsGroupTimeMicros())
                .isZero();
    }

    @Test
    void deadLetterSubscriptionNoneLeavesTheInitialSubscriptionOut() {
        SubscriptionSpec spec = spec(SubscriptionKind.SHARED)
                .deadLetter(Optional.of(new DeadLetter(3, "persistent://public/default/orders-dlq", Optional.empty())))
                .build();

        assertThat(conf(spec).getDeadLetterPolicy().getInitialSubscriptionName())
                .isNull();
    }

    @Test
    void subscriptionTypesMapOneToOne() {
        assertThat(conf(spec(SubscriptionKind.KEY_SHARED).build()).getSubscriptionType())
                .isEqualTo(SubscriptionType.Key_Shared);
        assertThat(conf(spec(SubscriptionKind.FAILOVER).build()).getSubscriptionType())
                .isEqualTo(SubscriptionType.Failover);
        assertThat(conf(spec(SubscriptionKind.EXCLUSIVE).build()).getSubscriptionType())
                .isEqualTo(SubscriptionType.Exclusive);
        assertThat(conf(spec(SubscriptionKind.SHARED).build()).getSubscriptionType())
                .isEqualTo(SubscriptionType.Shared);
    }
}
