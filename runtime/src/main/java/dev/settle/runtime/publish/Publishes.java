package dev.settle.runtime.publish;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * The sends made while one delivery is handled. Its acknowledgement waits for {@link #durable()}: every send
 * stored by the broker, or the first failure. With a transaction (an exactly-once delivery) every send is made in
 * it. Thread-safe: a function may publish from threads of its own.
 */
public final class Publishes {
    private final Outputs outputs;
    /** Null for an at-least-once delivery. */
    private final Transaction transaction;
    /** Null when the delivery is not traced. */
    private final SendTrace trace;

    private final List<CompletableFuture<MessageId>> sends = new ArrayList<>();
    /** Why no more sends are taken (the delivery's call timed out); null while they are. */
    private volatile String refused;

    public Publishes(Outputs outputs) {
        this(outputs, null, null);
    }

    /**
     * @param transaction what every send is made in; null for none
     * @param trace the delivery's trace, which every send goes into; null when it is not traced
     */
    public Publishes(Outputs outputs, Transaction transaction, SendTrace trace) {
        this.outputs = outputs;
        this.transaction = transaction;
        this.trace = trace;
    }

    /** A message for {@code topic} whose send this delivery waits for (and whose span it has, when traced). */
    public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) throws PulsarClientException {
        String why = refused;
        if (why != null) {
            throw new IllegalStateException(why);
        }
        return new TrackedMessageBuilder<>(
                transaction == null
                        ? outputs.newMessage(topic, schema)
                        : outputs.newMessage(topic, schema, transaction),
                this::add,
                trace,
                topic);
    }

    /** Takes no more sends from now on: {@link #newMessage} throws {@code why} (the delivery's call timed out). */
    public void refuse(String why) {
        refused = why;
    }

    /** Adds a send made otherwise, such as a failed attempt to get a producer. */
    public synchronized void add(CompletableFuture<MessageId> send) {
        sends.add(send);
    }

    /** How many sends were made so far. */
    public synchronized int count() {
        return sends.size();
    }

    /** Completes once every send made so far is durable; exceptionally, once all are done, if any failed. */
    public CompletableFuture<Void> durable() {
        CompletableFuture<?>[] all;
        synchronized (this) {
            if (sends.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            all = sends.toArray(CompletableFuture[]::new);
        }
        return CompletableFuture.allOf(all);
    }
}
