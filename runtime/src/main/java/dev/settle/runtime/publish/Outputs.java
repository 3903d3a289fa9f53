package dev.settle.runtime.publish;

import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;

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

    /** Flushes and closes whatever was opened; later messages fail. */
    @Override
    void close();
}
