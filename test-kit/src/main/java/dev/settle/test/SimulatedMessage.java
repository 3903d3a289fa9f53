package dev.settle.test;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.api.EncryptionContext;

/**
 * One copy of a simulated message as the consumer hands it out: Pulsar's own {@link Message}, so the runtime's
 * handler port decodes it and wraps it as the handler's delivery exactly as it does a broker's message. A
 * redelivery is a new copy with its own count; the id stays.
 */
final class SimulatedMessage implements Message<Object> {
    private final String topic;
    private final MessageId id;
    private final byte[] data;
    private final String key;
    private final Map<String, String> properties;
    private final long publishTime;
    private final long eventTime;
    private final long sequenceId;
    private final int redeliveryCount;
    private final Schema<?> schema;

    SimulatedMessage(
            String topic,
            MessageId id,
            byte[] data,
            String key,
            Map<String, String> properties,
            long publishTime,
            long eventTime,
            long sequenceId,
            int redeliveryCount,
            Schema<?> schema) {
        this.topic = topic;
        this.id = id;
        this.data = data;
        this.key = key;
        this.properties = Map.copyOf(properties);
        this.publishTime = publishTime;
        this.eventTime = eventTime;
        this.sequenceId = sequenceId;
        this.redeliveryCount = redeliveryCount;
        this.schema = schema;
    }

    /** The copy the broker sends next: the same message with the count it now has. */
    SimulatedMessage withRedeliveryCount(int count) {
        return new SimulatedMessage(
                topic, id, data, key, properties, publishTime, eventTime, sequenceId, count, schema);
    }

    /**
     * A copy published to {@code toTopic} as {@code newId} at {@code now}, with {@code newProperties}: the payload,
     * key, event time and schema kept, never redelivered yet (a delay copy).
     */
    SimulatedMessage copyTo(String toTopic, MessageId newId, Map<String, String> newProperties, long now) {
        return new SimulatedMessage(toTopic, newId, data, key, newProperties, now, eventTime, sequenceId, 0, schema);
    }

    /** The same message as a consumer of another schema receives it. */
    SimulatedMessage readWith(Schema<?> readerSchema) {
        return new SimulatedMessage(
                topic, id, data, key, properties, publishTime, eventTime, sequenceId, redeliveryCount, readerSchema);
    }

    @Override
    public Map<String, String> getProperties() {
        return properties;
    }

    @Override
    public boolean hasProperty(String name) {
        return properties.containsKey(name);
    }

    @Override
    public String getProperty(String name) {
        return properties.get(name);
    }

    @Override
    public byte[] getData() {
        return data;
    }

    @Override
    public int size() {
        return data.length;
    }

    @Override
    public Object getValue() {
        return schema.decode(data);
    }

    @Override
    public MessageId getMessageId() {
        return id;
    }

    @Override
    public long getPublishTime() {
        return publishTime;
    }

    @Override
    public long getEventTime() {
        return eventTime;
    }

    @Override
    public long getSequenceId() {
        return sequenceId;
    }

    @Override
    public String getProducerName() {
        return "settle-test";
    }

    @Override
    public boolean hasKey() {
        return key != null;
    }

    @Override
    public String getKey() {
        return key;
    }

    @Override
    public boolean hasBase64EncodedKey() {
        return false;
    }

    @Override
    public byte[] getKeyBytes() {
        return key == null ? null : key.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public boolean hasOrderingKey() {
        return false;
    }

    @Override
    public byte[] getOrderingKey() {
        return null;
    }

    @Override
    public String getTopicName() {
        return topic;
    }

    @Override
    public Optional<EncryptionContext> getEncryptionCtx() {
        return Optional.empty();
    }

    @Override
    public int getRedeliveryCount() {
        return redeliveryCount;
    }

    @Override
    public byte[] getSchemaVersion() {
        return null;
    }

    @Override
    public Optional<byte[]> getSchemaId() {
        return Optional.empty();
    }

    @Override
    public boolean isReplicated() {
        return false;
    }

    @Override
    public String getReplicatedFrom() {
        return null;
    }

    @Override
    public void release() {}

    @Override
    public boolean hasBrokerPublishTime() {
        return false;
    }

    @Override
    public Optional<Long> getBrokerPublishTime() {
        return Optional.empty();
    }

    @Override
    public boolean hasIndex() {
        return false;
    }

    @Override
    public Optional<Long> getIndex() {
        return Optional.empty();
    }

    @Override
    public String toString() {
        return topic + " " + id + (key == null ? "" : " key " + key) + " redelivery count " + redeliveryCount;
    }
}
