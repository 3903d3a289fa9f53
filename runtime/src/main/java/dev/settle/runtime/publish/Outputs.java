package dev.settle.runtime.publish;

import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * Where messages published while handling a delivery go: {@link PulsarOutputs} on a real client; a test or a
 * simulated broker may record them instead. Thread-safe.
 */
public interface Outputs extends AutoCloseable {

    /**
     * A message for {@code topic}, whose {@code sendAsync()} completes once the broker has stored it.
     *
     * @throws PulsarClientException when no producer can be had for the topic (it is refused, or unreachable)
     */
    <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) throws PulsarClientException;

    /**
     * A message for {@code topic} sent in {@code transaction}: stored by the broker at its send, visible to readers
     * only once the transaction commits, and discarded if it aborts (an exactly-once delivery's outputs).
     *
     * @throws PulsarClientException when no producer can be had for the topic; by default, always: these outputs
     *     cannot send in a transaction
     */
    default <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema, Transaction transaction)
            throws PulsarClientException {
        throw new PulsarClientException.NotSupportedException(getClass().getName() + " cannot send in a transaction");
    }

    /** Flushes and closes whatever was opened; later messages fail. */
    @Override
    void close();
}
