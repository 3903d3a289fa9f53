package dev.settle.runtime.publish;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Producer;
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
 * <p>Producers batch up to one message per delivery in flight, or 1 ms: the deliveries in flight share one broker
 * write, and a delivery alone (concurrency 1) is sent at once, since it holds its permit until the send is stored. A producer that fails for good (closed, its topic terminated or deleted) is dropped and made
 * again at the next message.
 */
public final class PulsarOutputs implements Outputs {
    private static final Logger log = LoggerFactory.getLogger(PulsarOutputs.class);

    private final Supplier<PulsarClient> client;
    private final String owner;
    private final int batchSize;
    private final Map<String, Producer<?>> producers = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param client the client, asked for at the first message
     * @param owner names the log lines
     * @param inFlight how many deliveries may publish at once (the subscription's concurrency): a batch is sent as
     *     soon as it holds that many messages, so a lone delivery never waits out the batching delay
     */
    public PulsarOutputs(Supplier<PulsarClient> client, String owner, int inFlight) {
        this.client = client;
        this.owner = owner;
        this.batchSize = Math.max(1, inFlight);
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
        producer = client.get()
                .newProducer(schema)
                .topic(topic)
                .enableBatching(true)
                .batchingMaxPublishDelay(1, TimeUnit.MILLISECONDS)
                .batchingMaxMessages(batchSize)
                // Waiting for room beats failing the delivery: the concurrency permit bounds what is in flight.
                .blockIfQueueFull(true)
                .create();
        producers.put(key, producer);
        log.info(
                "{}: publishing to {} ({} schema)",
                owner,
                topic,
                schema.getSchemaInfo().getType());
        return producer;
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
