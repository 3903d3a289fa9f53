package dev.settle.runtime.deadletter;

import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.publish.ResendGuardedMessageBuilder;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.impl.schema.AutoProduceBytesSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes Settle's dead letters of one subscription to its dead-letter topic: a producer made at the first dead letter
 * (most subscriptions never write one) and made again after a failed attempt. The driver's settlement decides which
 * delivery gets a letter and settles its original once this says the letter is stored.
 *
 * <p>Schemas, as the client's dead-letter producer has them: the producer is made with the consumer's schema
 * ({@code AUTO_PRODUCE_BYTES}), and each letter is written under the schema its message was read with, so Settle's
 * letters and the client's share one schema on the topic (a plain bytes producer left the topic with an empty schema
 * that refused every typed reader while it was connected). When the topic refuses that schema (a reader subscribed
 * first with another), the letter goes through a second producer that takes the topic's own schema. Neither checks
 * that the payload decodes under its schema ({@link #storingAnyBytes}): a letter is stored whatever its bytes are.
 *
 * <p>Threads: a letter is built on this writer's own thread, never on the caller's or the client's. Building it asks
 * for the schema the message was read with ({@link Message#getReaderSchema()}), and for a consumer of {@code
 * AUTO_CONSUME} (a String handler) or a versioned struct schema that schema is fetched from the broker and waited
 * for. On a client network thread (where the producer's creation, or an output's failure, completes) that wait
 * blocked the thread that would read the answer: every connection it serves stood still until the operation
 * timeout (30 s), lookups and subscribes of the whole client timed out and the broker dropped the connection for
 * missed keep-alives. The client's own dead-letter producer hops to its internal executor for the same reason.
 */
public final class DeadLetterProducer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DeadLetterProducer.class);

    /** The client's default send timeout, kept for letters outside transactions. */
    private static final int DEFAULT_SEND_TIMEOUT_SECONDS = 30;

    private final PulsarClient client;
    private final String subscription;
    private final DeadLetter deadLetter;
    private final Schema<?> schema;
    /** Whether letters are sent in their delivery's transaction (an exactly-once subscription's). */
    private final boolean inTransactions;

    private final Time time;

    /** Builds and sends the letters: one thread, started at the first letter, gone after a minute idle. */
    private final ThreadPoolExecutor letters;

    /** Guarded by this; null before the first dead letter. */
    private CompletableFuture<Producer<byte[]>> producer;
    /** Guarded by this; null until the consumer's schema was refused on the topic. */
    private CompletableFuture<Producer<byte[]>> topicSchemaProducer;

    /**
     * @param schema the consumer's schema, which the letters are written under
     * @param inTransactions whether each letter is sent in a transaction (exactly-once): its producer then has no
     *     send timeout
     * @param time the runtime's clock, which {@link #close(Duration)} waits on
     */
    public DeadLetterProducer(
            PulsarClient client,
            String subscription,
            DeadLetter deadLetter,
            Schema<?> schema,
            boolean inTransactions,
            Time time) {
        this.time = time;
        this.inTransactions = inTransactions;
        this.client = client;
        this.subscription = subscription;
        this.deadLetter = deadLetter;
        this.schema = schema;
        this.letters = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), task -> {
            Thread thread = new Thread(task, "settle-" + subscription + "-dead-letters");
            thread.setDaemon(true);
            return thread;
        });
        this.letters.allowCoreThreadTimeOut(true);
    }

    /**
     * Publishes a copy of {@code original} ({@link MessageCopy}) with the properties of {@link
     * DeadLetterProperties#letter}: the client's {@code REAL_TOPIC}, {@code REAL_SUBSCRIPTION} and {@code
     * ORIGIN_MESSAGE_ID} and {@code settleProperties}, set by Settle over whatever the message carried; in {@code
     * transaction} when there is one (an exactly-once subscription's letter, committed with its input's
     * acknowledgement).
     *
     * @return completes with the letter's id once the broker has stored it; exceptionally when it has not
     */
    public CompletionStage<MessageId> write(
            Message<?> original, Optional<Transaction> transaction, Map<String, String> settleProperties) {
        return write(
                original, original.getTopicName(), original.getMessageId().toString(), transaction, settleProperties);
    }

    /**
     * As {@link #write(Message, Optional, Map)}, naming {@code realTopic} and {@code realMessageId} as the original: a
     * delay copy's letter names the message it copies ({@link DelayCopy}), so a replay sends it to its own topic.
     */
    public CompletionStage<MessageId> write(
            Message<?> original,
            String realTopic,
            String realMessageId,
            Optional<Transaction> transaction,
            Map<String, String> settleProperties) {
        // The client's three set by Settle, not taken from the input as the client does (putIfAbsent): replay trusts
        // no letter's REAL_TOPIC, but names the real origin here.
        Map<String, String> properties = DeadLetterProperties.letter(
                original.getProperties(), realTopic, subscription, realMessageId, settleProperties);
        return copy(original, transaction, properties, 0);
    }

    /**
     * Publishes a copy of {@code original} ({@link MessageCopy}) with exactly {@code properties}, delivered at {@code
     * deliverAtMillis} (wall clock; 0 for at once: the broker's delayed delivery, on Shared and Key_Shared
     * subscriptions), in {@code transaction} when there is one: a delay copy ({@link DelayCopy}).
     *
     * @return completes with the copy's id once the broker has stored it; exceptionally when it has not
     */
    public CompletionStage<MessageId> copy(
            Message<?> original,
            Optional<Transaction> transaction,
            Map<String, String> properties,
            long deliverAtMillis) {
        Transaction in = transaction.orElse(null);
        return send(producer(false), original, properties, true, in, deliverAtMillis)
                .exceptionallyCompose(error -> incompatibleSchema(error)
                        ? send(producer(true), original, properties, false, in, deliverAtMillis)
                        : CompletableFuture.<MessageId>failedFuture(error));
    }

    private CompletableFuture<MessageId> send(
            CompletableFuture<Producer<byte[]>> producer,
            Message<?> original,
            Map<String, String> properties,
            boolean readersSchema,
            Transaction transaction,
            long deliverAtMillis) {
        // Async on this writer's thread, even when the producer is ready: getReaderSchema may wait for the broker.
        return producer.thenComposeAsync(
                to -> {
                    TypedMessageBuilder<byte[]> copy = newLetter(
                            to,
                            readersSchema && original.getReaderSchema().isPresent()
                                    ? storingAnyBytes(Schema.AUTO_PRODUCE_BYTES(
                                            original.getReaderSchema().get()))
                                    : null,
                            transaction);
                    if (deliverAtMillis > 0) {
                        // Not batched either way: the client never batches a message with a delivery time.
                        copy.deliverAt(deliverAtMillis);
                    }
                    return MessageCopy.of(original, copy, properties).sendAsync();
                },
                letters);
    }

    /**
     * {@code bytes} (an {@code AUTO_PRODUCE_BYTES} schema) with its check that each payload decodes under the schema
     * turned off: a letter is stored whatever its bytes are. An undecodable payload is one of the reasons a message is
     * dead-lettered at all; checked, its letter was refused ("Unrecognized token 'poison'") and the client wrote its
     * own copy, without the cause. The client's own dead-letter producer turns the check off the same way
     * ({@code ConsumerImpl} in 4.2.4; the setter is public on its schema class, not on the API).
     */
    static Schema<byte[]> storingAnyBytes(Schema<byte[]> bytes) {
        ((AutoProduceBytesSchema<?>) bytes).setRequireSchemaValidation(false);
        return bytes;
    }

    /** A letter in {@code schema} (null: the producer's), sent in {@code transaction} when there is one. */
    private static TypedMessageBuilder<byte[]> newLetter(
            Producer<byte[]> to, Schema<byte[]> schema, Transaction transaction) {
        if (transaction == null) {
            return schema == null ? to.newMessage() : to.newMessage(schema);
        }
        // A letter or a copy stored twice in its transaction is handled twice: guarded as outputs are.
        return ResendGuardedMessageBuilder.inTransaction(
                schema == null ? to.newMessage(transaction) : to.newMessage(schema, transaction), to);
    }

    private static boolean incompatibleSchema(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof PulsarClientException.IncompatibleSchemaException) {
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
            Schema<byte[]> bytes =
                    topicsSchema ? Schema.AUTO_PRODUCE_BYTES() : storingAnyBytes(Schema.AUTO_PRODUCE_BYTES(schema));
            current = client.newProducer(bytes)
                    .topic(deadLetter.topic())
                    // One entry per dead letter: each is replayed and acknowledged on its own.
                    .enableBatching(false)
                    .blockIfQueueFull(false)
                    // The client sends a transactional message only from a producer without a send timeout
                    // (ProducerBase.newMessage(Transaction)); the transaction's own timeout bounds the send instead.
                    .sendTimeout(inTransactions ? 0 : DEFAULT_SEND_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                    .createAsync()
                    // The topic's own schema is set on it as the producer is created, and with it validation on:
                    // turned off once it is (the producer keeps this very schema object: AUTO_PRODUCE_BYTES does not
                    // version, so the client does not clone it).
                    .thenApply(created -> {
                        storingAnyBytes(bytes);
                        return created;
                    })
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
                .thenCompose(consumer -> consumer.closeAsync())
                // Busy: the subscription exists, held by its reader (the held topic's re-drive, Exclusive while it
                // runs), so letters are kept already.
                .exceptionallyCompose(error ->
                        busy(error) ? CompletableFuture.completedFuture(null) : CompletableFuture.failedFuture(error));
    }

    private static boolean busy(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof PulsarClientException.ConsumerBusyException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Closes the producers, waiting up to {@code timeout} for one still being created (closing only the finished
     * ones left a producer being created open, and connected, for as long as the client lived).
     */
    public void close(Duration timeout) {
        // On the runtime's clock, which a test moves (issue 41).
        long deadline = time.nanoTime() + Time.saturatedNanos(timeout);
        List<CompletableFuture<Producer<byte[]>>> made = new ArrayList<>();
        synchronized (this) {
            made.add(producer);
            made.add(topicSchemaProducer);
        }
        for (CompletableFuture<Producer<byte[]>> one : made) {
            if (one == null) {
                continue;
            }
            try {
                if (!time.await(one::isDone, Duration.ofNanos(Math.max(0, deadline - time.nanoTime())))) {
                    // Closed as soon as it is made, not to outlive the subscription.
                    one.thenAccept(late -> late.closeAsync());
                    log.warn(
                            "subscription '{}': the dead-letter producer was still being created after {} ms; it is"
                                    + " closed once it is",
                            subscription,
                            timeout.toMillis());
                    continue;
                }
                one.join().close();
            } catch (CompletionException | CancellationException notMade) {
                // Nothing to close.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                one.thenAccept(late -> late.closeAsync());
            } catch (Exception e) {
                log.warn("subscription '{}': closing the dead-letter producer failed", subscription, e);
            }
        }
        letters.shutdown();
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(5));
    }
}
