package dev.settle.runtime.publish;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A message for a producer that does not exist yet: what the caller sets is recorded, and played onto the real
 * producer's message when {@link #sendAsync()} is sent, once the producer exists. The caller is not held up while
 * the producer is created ({@link PulsarOutputs}).
 */
final class DeferredMessageBuilder<T> extends ForwardingMessageBuilder<T> {
    private static final long serialVersionUID = 1L;

    /** Sends the message, given what plays the recorded settings onto a real one. */
    private final transient Function<Consumer<TypedMessageBuilder<T>>, CompletableFuture<MessageId>> send;

    private final transient List<Consumer<TypedMessageBuilder<T>>> settings = new ArrayList<>();

    DeferredMessageBuilder(Function<Consumer<TypedMessageBuilder<T>>, CompletableFuture<MessageId>> send) {
        this.send = send;
    }

    @Override
    TypedMessageBuilder<T> set(Consumer<TypedMessageBuilder<T>> setting) {
        settings.add(setting);
        return this;
    }

    @Override
    public CompletableFuture<MessageId> sendAsync() {
        List<Consumer<TypedMessageBuilder<T>>> recorded = List.copyOf(settings);
        return send.apply(message -> recorded.forEach(setting -> setting.accept(message)));
    }
}
