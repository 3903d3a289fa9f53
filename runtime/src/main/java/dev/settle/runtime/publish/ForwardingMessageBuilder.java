package dev.settle.runtime.publish;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A message builder whose every setting is handed, as an action on a real builder, to {@link #set}: applied at once
 * ({@link AppliedMessageBuilder}) or kept for a builder that does not exist yet ({@link DeferredMessageBuilder}).
 * Mutable arguments are copied, so a setting kept for later sees them as they were. {@link #send()} goes through
 * {@link #sendAsync()}.
 */
abstract class ForwardingMessageBuilder<T> implements TypedMessageBuilder<T> {
    private static final long serialVersionUID = 1L;

    /** Applies or keeps {@code setting}; returns this builder. */
    abstract TypedMessageBuilder<T> set(Consumer<TypedMessageBuilder<T>> setting);

    @Override
    public MessageId send() throws PulsarClientException {
        try {
            return sendAsync().join();
        } catch (CompletionException e) {
            throw PulsarClientException.unwrap(e.getCause() == null ? e : e.getCause());
        }
    }

    @Override
    public TypedMessageBuilder<T> key(String key) {
        return set(message -> message.key(key));
    }

    @Override
    public TypedMessageBuilder<T> keyBytes(byte[] key) {
        return set(message -> message.keyBytes(key));
    }

    @Override
    public TypedMessageBuilder<T> orderingKey(byte[] orderingKey) {
        return set(message -> message.orderingKey(orderingKey));
    }

    @Override
    public TypedMessageBuilder<T> value(T value) {
        return set(message -> message.value(value));
    }

    @Override
    public TypedMessageBuilder<T> property(String name, String value) {
        return set(message -> message.property(name, value));
    }

    @Override
    public TypedMessageBuilder<T> properties(Map<String, String> properties) {
        Map<String, String> copy = Map.copyOf(properties);
        return set(message -> message.properties(copy));
    }

    @Override
    public TypedMessageBuilder<T> eventTime(long timestamp) {
        return set(message -> message.eventTime(timestamp));
    }

    @Override
    public TypedMessageBuilder<T> sequenceId(long sequenceId) {
        return set(message -> message.sequenceId(sequenceId));
    }

    @Override
    public TypedMessageBuilder<T> replicationClusters(List<String> clusters) {
        List<String> copy = List.copyOf(clusters);
        return set(message -> message.replicationClusters(copy));
    }

    @Override
    public TypedMessageBuilder<T> disableReplication() {
        return set(TypedMessageBuilder::disableReplication);
    }

    @Override
    public TypedMessageBuilder<T> deliverAt(long timestamp) {
        return set(message -> message.deliverAt(timestamp));
    }

    @Override
    public TypedMessageBuilder<T> deliverAfter(long delay, TimeUnit unit) {
        return set(message -> message.deliverAfter(delay, unit));
    }

    @Override
    public TypedMessageBuilder<T> loadConf(Map<String, Object> config) {
        Map<String, Object> copy = Map.copyOf(config);
        return set(message -> message.loadConf(copy));
    }
}
