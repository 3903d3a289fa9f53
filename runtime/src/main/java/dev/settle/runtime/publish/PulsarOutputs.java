package dev.settle.runtime.publish;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.ProducerBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Outputs} through one Pulsar producer per output topic, created at the first message for it (the client
 * is asked for only then, so handlers can obtain publishers before the runtime has connected).
 *
 * <p>Producers are built from the subscription's {@code output:} settings, whose defaults are a Pulsar Functions
 * output producer's (batching on, 10 ms, LZ4), always with {@code blockIfQueueFull}: outputs are pipelined, so a
 * call does not wait for its send and many sends share one broker write; the driver bounds what is pending
 * ({@code maxPendingOutputs}). A producer that fails for good (closed, its topic terminated or deleted)
 * is dropped and made again at the next message.
 */
public final class PulsarOutputs implements Outputs {
    private static final Logger log = LoggerFactory.getLogger(PulsarOutputs.class);

    private final Supplier<PulsarClient> client;
    private final String owner;
    private final ProducerSettings settings;
    private final Map<String, Producer<?>> producers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param client the client, asked for at the first message
     * @param owner names the log lines
     * @param settings how the producers send
     */
    public PulsarOutputs(Supplier<PulsarClient> client, String owner, ProducerSettings settings) {
        this.client = client;
        this.owner = owner;
        this.settings = settings;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) throws PulsarClientException {
        if (closed) {
            throw new PulsarClientException.AlreadyClosedException("the outputs of " + owner + " are closed");
        }
        String key = topic + "|" + schema.getSchemaInfo().getType() + "|"
                + schema.getSchemaInfo().getName();
        Producer<T> producer = (Producer<T>) producers.get(key);
        if (producer == null) {
            producer = (Producer<T>) open(key, topic, schema);
        }
        Producer<T> used = producer;
        return new TrackedMessageBuilder<>(
                producer.newMessage(),
                sent -> sent.whenComplete((id, error) -> {
                    if (closedForGood(error)) {
                        // The client never reconnects such a producer: the next message makes a new one.
                        producers.remove(key, used);
                        used.closeAsync();
                    }
                }));
    }

    private synchronized Producer<?> open(String key, String topic, Schema<?> schema) throws PulsarClientException {
        Producer<?> producer = producers.get(key);
        if (producer != null) {
            return producer;
        }
        producer = builder(topic, schema).create();
        producers.put(key, producer);
        log.info(
                "{}: publishing to {} ({} schema)",
                owner,
                topic,
                schema.getSchemaInfo().getType());
        return producer;
    }

    /** A producer of {@code topic} as the settings say. */
    private <T> ProducerBuilder<T> builder(String topic, Schema<T> schema) {
        ProducerBuilder<T> builder = client.get()
                .newProducer(schema)
                .topic(topic)
                .enableBatching(settings.batching())
                .compressionType(settings.compression())
                // Waiting for room beats failing the delivery: maxPendingOutputs bounds what is in flight.
                .blockIfQueueFull(true);
        if (settings.batching()) {
            builder.batchingMaxPublishDelay(settings.batchingMaxDelay().toNanos(), TimeUnit.NANOSECONDS);
        }
        if (settings.maxPendingMessages() > 0) {
            builder.maxPendingMessages(settings.maxPendingMessages());
        }
        return builder;
    }

    private static boolean closedForGood(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof PulsarClientException.AlreadyClosedException
                    || e instanceof PulsarClientException.TopicTerminatedException
                    || e instanceof PulsarClientException.ProducerFencedException) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        closed = true;
        for (Producer<?> producer : producers.values()) {
            try {
                // Flushes what is batched: a send still pending completes (or fails) before the consumer closes.
                producer.close();
            } catch (PulsarClientException e) {
                log.warn("{}: closing the producer of {} failed", owner, producer.getTopic(), e);
            }
        }
        producers.clear();
    }
}
