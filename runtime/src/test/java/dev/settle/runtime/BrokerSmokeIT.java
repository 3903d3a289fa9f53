package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.PulsarFixture;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Proves the test broker is a real one: what a nack does is the broker's doing, not ours. */
class BrokerSmokeIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void aNegativelyAcknowledgedMessageComesBackWithRedeliveryCountOne() throws Exception {
        String topic = pulsar.topic("smoke");
        PulsarClient client = pulsar.client();
        try (Consumer<String> consumer = client.newConsumer(Schema.STRING)
                        .topic(topic)
                        .subscriptionName("smoke")
                        .subscriptionType(SubscriptionType.Shared)
                        .negativeAckRedeliveryDelay(100, TimeUnit.MILLISECONDS)
                        .subscribe();
                Producer<String> producer =
                        client.newProducer(Schema.STRING).topic(topic).create()) {
            producer.send("hello");

            Message<String> first = consumer.receive(30, TimeUnit.SECONDS);
            assertThat(first).isNotNull();
            assertThat(first.getValue()).isEqualTo("hello");
            assertThat(first.getRedeliveryCount()).isZero();
            consumer.negativeAcknowledge(first);

            Message<String> again = consumer.receive(30, TimeUnit.SECONDS);
            assertThat(again).isNotNull();
            assertThat(again.getMessageId()).isEqualTo(first.getMessageId());
            assertThat(again.getData()).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
            assertThat(again.getRedeliveryCount()).isEqualTo(1);
            consumer.acknowledge(again);
        }
        assertThat(pulsar.backlog(topic, "smoke")).isZero();
    }
}
