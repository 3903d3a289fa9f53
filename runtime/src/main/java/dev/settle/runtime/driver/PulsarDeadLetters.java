package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DeadLetter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SchemaSerializationException;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link DeadLetterWriter} on a real dead-letter topic: a producer per subscription, made at the first dead letter
 * (most subscriptions never write one) and made again after a failed attempt.
 *
 * <p>Schemas, as the client's dead-letter producer has them: the producer is made with the consumer's schema
 * ({@code AUTO_PRODUCE_BYTES}), and each letter is checked against the schema its message was read with, so Settle's
 * letters and the client's share one schema on the topic (a plain bytes producer left the topic with an empty schema
 * that refused every typed reader while it was connected). When the topic refuses that schema (a reader subscribed
 * first with another, or the payload does not fit it: an undecodable one), the letter goes through a second producer
 * that takes the topic's own schema.
 */
final class PulsarDeadLetters implements DeadLetterWriter<Message<?>>, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PulsarDeadLetters.class);

    private final PulsarClient client;
    private final String subscription;
    private final DeadLetter deadLetter;
    private final Schema<?> schema;

    /** Guarded by this; null before the first dead letter. */
    private CompletableFuture<Producer<byte[]>> producer;
    /** Guarded by this; null until the consumer's schema was refused on the topic. */
    private CompletableFuture<Producer<byte[]>> topicSchemaProducer;

    PulsarDeadLetters(PulsarClient client, String subscription, DeadLetter deadLetter, Schema<?> schema) {
        this.client = client;
        this.subscription = subscription;
        this.deadLetter = deadLetter;
        this.schema = schema;
    }

    @Override
    public CompletionStage<?> write(Message<?> original, Map<String, String> settleProperties) {
        Map<String, String> properties = new LinkedHashMap<>(original.getProperties());
        // The client's three, as its own dead letters carry them (putIfAbsent: a replayed letter keeps its first).
        properties.putIfAbsent(DeadLetterProperties.REAL_TOPIC, original.getTopicName());
        properties.putIfAbsent(DeadLetterProperties.REAL_SUBSCRIPTION, subscription);
        properties.putIfAbsent(
                DeadLetterProperties.ORIGIN_MESSAGE_ID, original.getMessageId().toString());
        properties.putAll(settleProperties);
        return send(producer(false), original, properties, true)
                .exceptionallyCompose(error -> incompatibleSchema(error)
                        ? send(producer(true), original, properties, false)
                        : CompletableFuture.<MessageId>failedFuture(error));
    }

    private static CompletableFuture<MessageId> send(
            CompletableFuture<Producer<byte[]>> producer,
            Message<?> original,
            Map<String, String> properties,
            boolean readersSchema) {
        return producer.thenCompose(to -> {
            TypedMessageBuilder<byte[]> copy =
                    readersSchema && original.getReaderSchema().isPresent()
                            ? to.newMessage(Schema.AUTO_PRODUCE_BYTES(
                                    original.getReaderSchema().get()))
                            : to.newMessage();
            copy.value(original.getData()).properties(properties);
            if (original.hasBase64EncodedKey()) {
                copy.keyBytes(original.getKeyBytes());
            } else if (original.hasKey()) {
                copy.key(original.getKey());
            }
            if (original.hasOrderingKey()) {
                copy.orderingKey(original.getOrderingKey());
            }
            if (original.getEventTime() > 0) {
                copy.eventTime(original.getEventTime());
            }
            return copy.sendAsync();
        });
    }

    private static boolean incompatibleSchema(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof PulsarClientException.IncompatibleSchemaException
                    || cause instanceof SchemaSerializationException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The producer of the consumer's schema, or ({@code topicsSchema}) the one that takes the topic's own; each made
     * at its first use and made again after a failure.
     */
    private synchronized CompletableFuture<Producer<byte[]>> producer(boolean topicsSchema) {
        CompletableFuture<Producer<byte[]>> current = topicsSchema ? topicSchemaProducer : producer;
        if (current == null || current.isCompletedExceptionally()) {
            current = client.newProducer(topicsSchema ? Schema.AUTO_PRODUCE_BYTES() : Schema.AUTO_PRODUCE_BYTES(schema))
                    .topic(deadLetter.topic())
                    // One entry per dead letter: each is replayed and acknowledged on its own.
                    .enableBatching(false)
                    .blockIfQueueFull(false)
                    .createAsync()
                    .thenCompose(created -> initialSubscription().thenApply(ignored -> created));
            if (topicsSchema) {
                topicSchemaProducer = current;
            } else {
                producer = current;
            }
        }
        return current;
    }

    /**
     * Creates the dead-letter topic's initial subscription (as the client's dead-letter producer does) before the
     * first letter, so letters are kept before anyone subscribes. Subscribing is how a client creates one; an
     * AUTO_CONSUME consumer registers no schema.
     */
    private CompletableFuture<?> initialSubscription() {
        if (deadLetter.initialSubscription().isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return client.newConsumer(Schema.AUTO_CONSUME())
                .topic(deadLetter.topic())
                .subscriptionName(deadLetter.initialSubscription().get())
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .startPaused(true)
                .receiverQueueSize(1)
                .subscribeAsync()
                .thenCompose(consumer -> consumer.closeAsync());
    }

    @Override
    public void close() {
        List<CompletableFuture<Producer<byte[]>>> made = new ArrayList<>();
        synchronized (this) {
            made.add(producer);
            made.add(topicSchemaProducer);
        }
        for (CompletableFuture<Producer<byte[]>> one : made) {
            if (one != null && one.isDone() && !one.isCompletedExceptionally()) {
                try {
                    one.join().close();
                } catch (Exception e) {
                    log.warn("subscription '{}': closing the dead-letter producer failed", subscription, e);
                }
            }
        }
    }
}
