package dev.settle.runtime.publish;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * Messages for {@code to} recorded, not sent, until the caller knows they may be: a batch handler's outputs at
 * exactly-once (issue 47), held per delivery and per call, sent only for a delivery whose outcome acknowledges it, in
 * its own transaction, so no output of a delivery that comes back (or of a call that threw and was split) is ever
 * committed. Each send answers at once, with no message id: the handler publishes and goes on, as with outputs that
 * are sent. Thread-safe.
 */
public final class HeldOutputs implements Outputs {
    private final Outputs to;
    /** Guarded by this. */
    private final List<Consumer<Publishes>> held = new ArrayList<>();
    /** Guarded by this; made on the first publish. */
    private Publishes publishes;

    public HeldOutputs(Outputs to) {
        this.to = to;
    }

    /** The outputs the held messages go to once sent. */
    public Outputs to() {
        return to;
    }

    /** The sends of the delivery while they are held: every publish of the call goes here. */
    public synchronized Publishes publishes() {
        if (publishes == null) {
            publishes = new Publishes(this);
        }
        return publishes;
    }

    @Override
    public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) {
        return new DeferredMessageBuilder<T>(recorded -> {
            synchronized (this) {
                held.add(sends -> send(sends, topic, schema, recorded));
            }
            return CompletableFuture.completedFuture(null);
        });
    }

    /**
     * Sends every held message, in the order published, as {@code sends} makes them (the delivery's own: in its
     * transaction, in its trace, its acknowledgement waiting for them); how many.
     */
    public synchronized int sendThrough(Publishes sends) {
        for (Consumer<Publishes> message : held) {
            message.accept(sends);
        }
        return held.size();
    }

    private static <T> void send(
            Publishes sends, String topic, Schema<T> schema, Consumer<TypedMessageBuilder<T>> recorded) {
        TypedMessageBuilder<T> message;
        try {
            message = sends.newMessage(topic, schema);
        } catch (PulsarClientException | RuntimeException e) {
            // As SdkPublisher does: a producer that cannot be had is a failed send, so the delivery is not
            // acknowledged.
            sends.add(CompletableFuture.failedFuture(e));
            return;
        }
        recorded.accept(message);
        message.sendAsync();
    }

    /** Nothing to close: the messages never sent are dropped with this object. */
    @Override
    public void close() {}
}
