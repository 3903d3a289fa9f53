package dev.settle.runtime.function;

import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.functions.api.Record;

/**
 * The message being handled, as a function sees it through {@code context.getCurrentRecord()}. Its {@link #ack()}
 * and {@link #fail()} say what becomes of the input once the call is over; outputs are still published first.
 */
final class InputRecord implements Record<Object> {
    private final Message<?> message;
    /** The topic it names: the message's, or a delay copy's original's. */
    private final String topic;

    private final Object value;
    private final Schema<?> schema;
    private volatile boolean failed;

    InputRecord(Message<?> message, String topic, Object value, Schema<?> schema) {
        this.message = message;
        this.topic = topic;
        this.value = value;
        this.schema = schema;
    }

    @Override
    public Optional<String> getTopicName() {
        return Optional.of(topic);
    }

    @Override
    public Optional<String> getKey() {
        return message.hasKey() ? Optional.of(message.getKey()) : Optional.empty();
    }

    @Override
    @SuppressWarnings("unchecked")
    public Schema<Object> getSchema() {
        return (Schema<Object>) schema;
    }

    @Override
    public Object getValue() {
        return value;
    }

    @Override
    public Optional<Long> getEventTime() {
        return message.getEventTime() > 0 ? Optional.of(message.getEventTime()) : Optional.empty();
    }

    @Override
    public Optional<String> getPartitionId() {
        return Optional.of(topic);
    }

    @Override
    public Optional<Long> getRecordSequence() {
        return Optional.of(message.getSequenceId());
    }

    @Override
    public Map<String, String> getProperties() {
        return message.getProperties();
    }

    /**
     * Nothing to do: the input is acknowledged once the call's outputs are durable, as when the function just
     * returns.
     */
    @Override
    public void ack() {}

    /** A failure once the call is over: retried by the failure backoff, capped by the dead-letter topic. */
    @Override
    public void fail() {
        failed = true;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Optional<Message<Object>> getMessage() {
        return Optional.of((Message<Object>) message);
    }

    boolean failed() {
        return failed;
    }

    Message<?> message() {
        return message;
    }
}
