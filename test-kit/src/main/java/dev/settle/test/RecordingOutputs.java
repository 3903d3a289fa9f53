package dev.settle.test;

import dev.settle.runtime.publish.Outputs;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * One subscription's {@link Outputs} on the kit: a send is stored at once on the kit's topic (so it is recorded,
 * and a subscription consuming the topic gets it), or fails when the test made its topic fail
 * ({@link SettleTestDriver#failPublishesTo}). The runtime's publish-then-ack then holds as with Pulsar producers:
 * the input is acknowledged only when every send succeeded.
 */
final class RecordingOutputs implements Outputs {
    private final SettleTestDriver owner;
    private final String subscription;
    private volatile boolean closed;

    RecordingOutputs(SettleTestDriver owner, String subscription) {
        this.owner = owner;
        this.subscription = subscription;
    }

    @Override
    public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) throws PulsarClientException {
        if (closed) {
            throw new PulsarClientException.AlreadyClosedException(
                    "the outputs of subscription '" + subscription + "' are closed");
        }
        return new Message<>(TestMessage.qualified(topic), schema);
    }

    @Override
    public void close() {
        closed = true;
    }

    /** A message being built, sent to the kit's topic. */
    private final class Message<T> implements TypedMessageBuilder<T> {
        private static final long serialVersionUID = 1L;

        private final String topic;
        private final transient Schema<T> schema;
        private transient T value;
        private String key;
        private final Map<String, String> properties = new java.util.LinkedHashMap<>();
        private long eventTime;

        Message(String topic, Schema<T> schema) {
            this.topic = topic;
            this.schema = schema;
        }

        @Override
        public MessageId send() throws PulsarClientException {
            try {
                return sendAsync().join();
            } catch (CompletionException e) {
                throw PulsarClientException.unwrap(e.getCause() == null ? e : e.getCause());
            }
        }

        @Override
        public CompletableFuture<MessageId> sendAsync() {
            if (owner.publishesFail(topic)) {
                return CompletableFuture.failedFuture(new PulsarClientException(
                        "publishing to " + topic + " fails: the test said failPublishesTo(\"" + topic + "\")"));
            }
            byte[] data;
            try {
                data = schema.encode(value);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
            return CompletableFuture.completedFuture(
                    owner.output(subscription, topic, value, data, key, properties, eventTime, schema));
        }

        @Override
        public TypedMessageBuilder<T> key(String key) {
            this.key = key;
            return this;
        }

        @Override
        public TypedMessageBuilder<T> keyBytes(byte[] key) {
            this.key = java.util.Base64.getEncoder().encodeToString(key);
            return this;
        }

        @Override
        public TypedMessageBuilder<T> orderingKey(byte[] orderingKey) {
            return this;
        }

        @Override
        public TypedMessageBuilder<T> value(T value) {
            this.value = value;
            return this;
        }

        @Override
        public TypedMessageBuilder<T> property(String name, String value) {
            properties.put(name, value);
            return this;
        }

        @Override
        public TypedMessageBuilder<T> properties(Map<String, String> properties) {
            this.properties.putAll(properties);
            return this;
        }

        @Override
        public TypedMessageBuilder<T> eventTime(long timestamp) {
            eventTime = timestamp;
            return this;
        }

        @Override
        public TypedMessageBuilder<T> sequenceId(long sequenceId) {
            return this;
        }

        @Override
        public TypedMessageBuilder<T> replicationClusters(List<String> clusters) {
            return this;
        }

        @Override
        public TypedMessageBuilder<T> disableReplication() {
            return this;
        }

        @Override
        public TypedMessageBuilder<T> deliverAt(long timestamp) {
            throw new UnsupportedOperationException("the test kit does not simulate delayed delivery");
        }

        @Override
        public TypedMessageBuilder<T> deliverAfter(long delay, TimeUnit unit) {
            throw new UnsupportedOperationException("the test kit does not simulate delayed delivery");
        }

        @Override
        public TypedMessageBuilder<T> loadConf(Map<String, Object> config) {
            throw new UnsupportedOperationException("the test kit does not take loadConf; set each field");
        }
    }
}
