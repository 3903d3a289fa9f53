package dev.settle.runtime.function;

import dev.settle.testbroker.PulsarEndpoints;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * What the integration tests of a function's outputs share: a backlog published before the function starts, a
 * manifest of one function subscription, and an output topic read to its end.
 */
final class FunctionTopics {
    private FunctionTopics() {}

    /**
     * Creates {@code topic} with {@code subscription} from its earliest message, then publishes {@code count} string
     * messages, {@code fill} setting the value (and key...) of the {@code i}th, and waits until all are stored.
     */
    static void backlog(
            PulsarClient client,
            PulsarAdmin admin,
            String topic,
            String subscription,
            int count,
            BiConsumer<Integer, TypedMessageBuilder<String>> fill)
            throws Exception {
        admin.topics().createNonPartitionedTopic(topic);
        admin.topics().createSubscription(topic, subscription, MessageId.earliest);
        try (Producer<String> producer =
                client.newProducer(Schema.STRING).topic(topic).create()) {
            List<CompletableFuture<MessageId>> sends = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                TypedMessageBuilder<String> message = producer.newMessage();
                fill.accept(i, message);
                sends.add(message.sendAsync());
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        }
    }

    /**
     * Writes {@code file} in {@code folder}: one subscription {@code name} on {@code topic}, the code of {@code jar}
     * (next to it) as {@code code} says (YAML lines such as {@code function: ...} and {@code output: ...}).
     */
    static Path manifest(
            Path folder, String file, PulsarEndpoints pulsar, String name, String topic, String jar, String code)
            throws IOException {
        Path manifest = folder.resolve(file);
        Files.writeString(manifest, """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                subscriptions:
                  - name: %s
                    topics: [%s]
                    jar: %s
                %s
                """.formatted(
                        pulsar.serviceUrl(), name, topic, jar, code.indent(4).stripTrailing()));
        return manifest;
    }

    /** A consumer of {@code topic} from its earliest message, as a service downstream of a function reads its output. */
    static Consumer<String> downstream(PulsarClient client, String topic) throws PulsarClientException {
        return client.newConsumer(Schema.STRING)
                .topic(topic)
                .subscriptionName("downstream")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe();
    }

    /** A producer to {@code topic} that stores each message as an entry of its own. */
    static Producer<String> unbatched(PulsarClient client, String topic) throws PulsarClientException {
        return client.newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create();
    }

    /**
     * Every message of {@code topic} from its earliest, read (and acknowledged) on {@code subscription} until none
     * comes for 3 s, in the order they were stored. Read rather than counted from a backlog: outputs are batched, and a
     * backlog counts entries.
     */
    static List<Message<String>> readAll(PulsarClient client, String topic, String subscription) throws IOException {
        try (Consumer<String> reader = client.newConsumer(Schema.STRING)
                .topic(topic)
                .subscriptionName(subscription)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .receiverQueueSize(5_000)
                .subscribe()) {
            List<Message<String>> messages = new ArrayList<>();
            Message<String> message;
            while ((message = reader.receive(3, TimeUnit.SECONDS)) != null) {
                reader.acknowledge(message);
                messages.add(message);
            }
            return messages;
        }
    }
}
