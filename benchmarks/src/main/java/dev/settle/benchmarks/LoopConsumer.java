package dev.settle.benchmarks;

import dev.settle.benchmarks.handlers.Marker;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

/**
 * The baseline: the consumer loop a user would write by hand instead of running Settle. Same schema (bytes), same
 * subscription type (Shared), same receiver queue (1000), same initial position, the payload read as a handler
 * would get it; then {@code acknowledgeAsync}. Prints the same markers as the benchmark handler and exits.
 *
 * <p>Arguments: service URL, topic, subscription, message count, and the messages before the {@code warm} marker
 * (0 when absent).
 */
final class LoopConsumer {
    private LoopConsumer() {}

    /**
     * The loops' consumer: bytes, Shared, receiver queue 1000, from the earliest message, as Settle's manifests; every
     * other setting the client's default. Prints the settings in force on a {@code SETTINGS} line for the table.
     */
    static Consumer<byte[]> subscribe(PulsarClient client, String topic, String subscription)
            throws PulsarClientException {
        Consumer<byte[]> consumer = client.newConsumer(Schema.BYTES)
                .topic(topic)
                .subscriptionName(subscription)
                .subscriptionType(SubscriptionType.Shared)
                .receiverQueueSize(1000)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe();
        System.out.println(SettingsInForce.line(SettingsInForce.of(consumer)));
        return consumer;
    }

    public static void main(String[] args) throws Exception {
        String serviceUrl = args[0];
        String topic = args[1];
        String subscription = args[2];
        long count = Long.parseLong(args[3]);
        long warmUp = args.length > 4 ? Long.parseLong(args[4]) : 0;
        try (PulsarClient client = PulsarClient.builder().serviceUrl(serviceUrl).build();
                Consumer<byte[]> consumer = subscribe(client, topic, subscription)) {
            long sum = 0;
            for (long i = 0; i < count; i++) {
                Message<byte[]> message = consumer.receive();
                if (i == 0) {
                    Marker.now("first");
                }
                if (i == warmUp) {
                    Marker.now("warm");
                }
                sum += message.getValue().length;
                consumer.acknowledgeAsync(message);
            }
            Marker.now("last");
            Marker.print("bytes", sum);
        }
    }
}
