package dev.settle.runtime.publish;

import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A message sent in a transaction that fails when its producer's connection dropped while it was on its way, though
 * the client confirmed it. The 4.2.4 client sends every unconfirmed message again once its producer reconnects
 * ({@code ProducerImpl.resendMessages}), into the same transaction; a copy the broker had stored before the drop, its
 * receipt lost, is then stored twice, and without the brokers' deduplication both copies commit and are read
 * (ExactlyOnceConnectionDropIT: a keep-alive timeout on a loaded machine read outputs twice this way). Failing the send
 * aborts its transaction, so neither copy is read, and brings its input back to be handled again.
 *
 * <p>The drop is seen by the producer's {@code getLastDisconnectedTimestamp()}, which the client sets at every
 * disconnection (a closed connection or a broker that closed the producer) and never clears: read when this builder
 * is made, just before the send, and again once it is confirmed. A drop between the two may have sent the message
 * twice; one before it did not (the send went out on the new connection), one after it is too late to matter.
 */
public final class ResendGuardedMessageBuilder<T> extends AppliedMessageBuilder<T> {
    private static final long serialVersionUID = 1L;

    /**
     * {@code message}, about to be sent through {@code producer} in a transaction, failing when its connection drops on
     * the way: for every send in a transaction (outputs, dead letters, delay and held copies, re-drives), since any of
     * them stored twice is read twice.
     */
    public static <T> TypedMessageBuilder<T> inTransaction(TypedMessageBuilder<T> message, Producer<?> producer) {
        return new ResendGuardedMessageBuilder<>(message, producer);
    }

    private final transient Producer<?> producer;
    private final long disconnectedBefore;

    ResendGuardedMessageBuilder(TypedMessageBuilder<T> delegate, Producer<?> producer) {
        super(delegate);
        this.producer = producer;
        this.disconnectedBefore = producer.getLastDisconnectedTimestamp();
    }

    @Override
    public CompletableFuture<MessageId> sendAsync() {
        return delegate.sendAsync()
                .thenCompose(id -> producer.getLastDisconnectedTimestamp() == disconnectedBefore
                        ? CompletableFuture.completedFuture(id)
                        : CompletableFuture.failedFuture(
                                new PulsarClientException.ConnectException("the connection of the"
                                        + " producer to " + producer.getTopic()
                                        + " dropped while a message in a transaction was on its way, and the"
                                        + " client sent it again: the broker may hold it twice, so its transaction is aborted and"
                                        + " its input comes back")));
    }
}
