package dev.settle.runtime.publish;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A message builder that tells someone of every send it makes, before the caller sees it: so a delivery's
 * acknowledgement can wait for it, and a dead producer can be replaced. {@link #send()} goes through
 * {@link #sendAsync()}, so a synchronous send that fails is seen too, even when the caller catches it. When the
 * delivery is traced, each send gets a span whose context goes into the message's properties as it is sent, over
 * whatever the caller set (a copied input's {@code traceparent} would name the producer's span, not this send's).
 */
public final class TrackedMessageBuilder<T> extends AppliedMessageBuilder<T> {
    private static final long serialVersionUID = 1L;

    private final transient Consumer<CompletableFuture<MessageId>> onSend;
    /** Null when the delivery is not traced. */
    private final transient SendTrace trace;

    private final String topic;

    public TrackedMessageBuilder(TypedMessageBuilder<T> delegate, Consumer<CompletableFuture<MessageId>> onSend) {
        this(delegate, onSend, null, null);
    }

    /** @param trace the delivery's trace, whose span each send to {@code topic} gets; null when not traced */
    TrackedMessageBuilder(
            TypedMessageBuilder<T> delegate,
            Consumer<CompletableFuture<MessageId>> onSend,
            SendTrace trace,
            String topic) {
        super(delegate);
        this.onSend = onSend;
        this.trace = trace;
        this.topic = topic;
    }

    @Override
    public CompletableFuture<MessageId> sendAsync() {
        if (trace == null) {
            CompletableFuture<MessageId> sent = delegate.sendAsync();
            onSend.accept(sent);
            return sent;
        }
        SendTrace.Sending span = trace.send(topic);
        span.properties().forEach(delegate::property);
        // What the delivery waits for completes once the span has ended, so the send lies within the handling.
        CompletableFuture<MessageId> sent = delegate.sendAsync().whenComplete(span::sent);
        onSend.accept(sent);
        return sent;
    }
}
