package dev.settle.runtime.driver;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ConsumerCalls} on a real consumer, attached once it is subscribed (no message can be settled before: none
 * has been received). Nacks take the {@code Message}: the id form hands the backoff a count of 0.
 */
final class PulsarConsumerCalls implements ConsumerCalls<Message<?>> {
    private static final Logger log = LoggerFactory.getLogger(PulsarConsumerCalls.class);

    private final String subscription;
    private volatile Consumer<?> consumer;

    PulsarConsumerCalls(String subscription) {
        this.subscription = subscription;
    }

    void attach(Consumer<?> subscribed) {
        consumer = subscribed;
    }

    @Override
    public CompletableFuture<Void> acknowledge(Message<?> message) {
        // Acks are grouped and sent by the client (100 ms by default); close() flushes them. The future is
        // almost always complete already: look before attaching a callback, which would allocate per message.
        CompletableFuture<Void> acked = consumer.acknowledgeAsync(message);
        if (!acked.isDone() || acked.isCompletedExceptionally()) {
            acked.exceptionally(e -> {
                log.warn(
                        "subscription '{}': acknowledging {} failed; the message will be delivered again",
                        subscription,
                        message.getMessageId(),
                        e);
                return null;
            });
        }
        return acked;
    }

    /**
     * Acknowledges {@code inputs} in {@code transaction} (exactly-once): sent at once, in one request, and undone if
     * the transaction aborts. Completes once the broker has them in the transaction; exceptionally when it refused
     * one (acknowledged already, or held by another transaction).
     */
    CompletableFuture<Void> acknowledge(List<MessageId> inputs, Transaction transaction) {
        return inputs.size() == 1
                ? consumer.acknowledgeAsync(inputs.get(0), transaction)
                : consumer.acknowledgeAsync(inputs, transaction);
    }

    @Override
    public void negativeAcknowledge(Message<?> message) {
        consumer.negativeAcknowledge(message);
    }
}
