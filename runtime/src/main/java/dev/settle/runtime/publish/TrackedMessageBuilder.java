package dev.settle.runtime.publish;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A message builder that tells someone of every send it makes, before the caller sees it: so a delivery's
 * acknowledgement can wait for it, and a dead producer can be replaced. {@link #send()} goes through
 * {@link #sendAsync()}, so a synchronous send that fails is seen too, even when the caller catches it.
 */
public final class TrackedMessageBuilder<T> implements TypedMessageBuilder<T> {
    private static final long serialVersionUID = 1L;

    private final transient TypedMessageBuilder<T> delegate;
    private final transient Consumer<CompletableFuture<MessageId>> onSend;

    public TrackedMessageBuilder(TypedMessageBuilder<T> delegate, Consumer<CompletableFuture<MessageId>> onSend) {
        this.delegate = delegate;
        this.onSend = onSend;
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
        CompletableFuture<MessageId> sent = delegate.sendAsync();
        onSend.accept(sent);
        return sent;
    }

    @Override
    public TypedMessageBuilder<T> key(String key) {
        delegate.key(key);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> keyBytes(byte[] key) {
        delegate.keyBytes(key);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> orderingKey(byte[] orderingKey) {
        delegate.orderingKey(orderingKey);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> value(T value) {
        delegate.value(value);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> property(String name, String value) {
        delegate.property(name, value);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> properties(Map<String, String> properties) {
        delegate.properties(properties);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> eventTime(long timestamp) {
        delegate.eventTime(timestamp);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> sequenceId(long sequenceId) {
        delegate.sequenceId(sequenceId);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> replicationClusters(List<String> clusters) {
        delegate.replicationClusters(clusters);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> disableReplication() {
        delegate.disableReplication();
        return this;
    }

    @Override
    public TypedMessageBuilder<T> deliverAt(long timestamp) {
        delegate.deliverAt(timestamp);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> deliverAfter(long delay, TimeUnit unit) {
        delegate.deliverAfter(delay, unit);
        return this;
    }

    @Override
    public TypedMessageBuilder<T> loadConf(Map<String, Object> config) {
        delegate.loadConf(config);
        return this;
    }
}
