package dev.settle.runtime.publish;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A message for a producer that does not exist yet: what the caller sets is recorded, and played onto the real
 * producer's message when {@link #sendAsync()} is sent, once the producer exists. The caller is not held up while
 * the producer is created ({@link PulsarOutputs}).
 */
final class DeferredMessageBuilder<T> implements TypedMessageBuilder<T> {
    private static final long serialVersionUID = 1L;

    /** Sends the message, given what plays the recorded settings onto a real one. */
    private final transient Function<Consumer<TypedMessageBuilder<T>>, CompletableFuture<MessageId>> send;

    private final transient List<Consumer<TypedMessageBuilder<T>>> settings = new ArrayList<>();

    DeferredMessageBuilder(Function<Consumer<TypedMessageBuilder<T>>, CompletableFuture<MessageId>> send) {
        this.send = send;
    }

    private TypedMessageBuilder<T> record(Consumer<TypedMessageBuilder<T>> setting) {
        settings.add(setting);
        return this;
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
        List<Consumer<TypedMessageBuilder<T>>> recorded = List.copyOf(settings);
        return send.apply(message -> recorded.forEach(setting -> setting.accept(message)));
    }

    @Override
    public TypedMessageBuilder<T> key(String key) {
        return record(message -> message.key(key));
    }

    @Override
    public TypedMessageBuilder<T> keyBytes(byte[] key) {
        return record(message -> message.keyBytes(key));
    }

    @Override
    public TypedMessageBuilder<T> orderingKey(byte[] orderingKey) {
        return record(message -> message.orderingKey(orderingKey));
    }

    @Override
    public TypedMessageBuilder<T> value(T value) {
        return record(message -> message.value(value));
    }

    @Override
    public TypedMessageBuilder<T> property(String name, String value) {
        return record(message -> message.property(name, value));
    }

    @Override
    public TypedMessageBuilder<T> properties(Map<String, String> properties) {
        Map<String, String> copy = Map.copyOf(properties);
        return record(message -> message.properties(copy));
    }

    @Override
    public TypedMessageBuilder<T> eventTime(long timestamp) {
        return record(message -> message.eventTime(timestamp));
    }

    @Override
    public TypedMessageBuilder<T> sequenceId(long sequenceId) {
        return record(message -> message.sequenceId(sequenceId));
    }

    @Override
    public TypedMessageBuilder<T> replicationClusters(List<String> clusters) {
        List<String> copy = List.copyOf(clusters);
        return record(message -> message.replicationClusters(copy));
    }

    @Override
    public TypedMessageBuilder<T> disableReplication() {
        return record(TypedMessageBuilder::disableReplication);
    }

    @Override
    public TypedMessageBuilder<T> deliverAt(long timestamp) {
        return record(message -> message.deliverAt(timestamp));
    }

    @Override
    public TypedMessageBuilder<T> deliverAfter(long delay, TimeUnit unit) {
        return record(message -> message.deliverAfter(delay, unit));
    }

    @Override
    public TypedMessageBuilder<T> loadConf(Map<String, Object> config) {
        Map<String, Object> copy = Map.copyOf(config);
        return record(message -> message.loadConf(copy));
    }
}
