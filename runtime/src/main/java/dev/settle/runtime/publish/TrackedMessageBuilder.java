package dev.settle.runtime.publish;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A message builder that tells someone of every send it makes, before the caller sees it: so a delivery's
 * acknowledgement can wait for it, and a dead producer can be replaced. {@link #send()} goes through
 * {@link #sendAsync()}, so a synchronous send that fails is seen too, even when the caller catches it.
 */
public final class TrackedMessageBuilder<T> extends ForwardingMessageBuilder<T> {
    private static final long serialVersionUID = 1L;

    private final transient TypedMessageBuilder<T> delegate;
    private final transient Consumer<CompletableFuture<MessageId>> onSend;

    public TrackedMessageBuilder(TypedMessageBuilder<T> delegate, Consumer<CompletableFuture<MessageId>> onSend) {
        this.delegate = delegate;
        this.onSend = onSend;
    }

    @Override
    TypedMessageBuilder<T> set(Consumer<TypedMessageBuilder<T>> setting) {
        setting.accept(delegate);
        return this;
    }

    @Override
    public CompletableFuture<MessageId> sendAsync() {
        CompletableFuture<MessageId> sent = delegate.sendAsync();
        onSend.accept(sent);
        return sent;
    }
}
