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
     * one (acknowledged already, or held by another transaction) or the request failed, and then only once each input
     * was sent again alone ({@link #takeInAlone}).
     */
    CompletableFuture<Void> acknowledge(List<MessageId> inputs, Transaction transaction) {
        if (inputs.size() == 1) {
            return consumer.acknowledgeAsync(inputs.get(0), transaction);
        }
        return consumer.acknowledgeAsync(inputs, transaction)
                .exceptionallyCompose(failed -> takeInAlone(inputs, transaction, failed)
                        .thenCompose(answered -> CompletableFuture.failedFuture(failed)));
    }

    /**
     * After a request for several {@code inputs} failed: each sent again in {@code transaction}, a request of its own;
     * completes once the broker has answered every one, whatever it answered. The 4.2.4 broker takes a request's
     * inputs out of the consumer's unacknowledged ones before it checks them, and refuses the whole request at its
     * first conflict ({@code Consumer.individualAckWithTransaction}, {@code PendingAckHandleImpl}), so the others of a
     * refused request are held by no consumer and no transaction: the abort would not give them back, a negative
     * acknowledgement of them is ignored, and they would wait behind the read position until the subscription's last
     * consumer leaves (docs/pulsar-client-notes.md). Sent alone, the conflicting input is refused again and each other
     * one is taken into the transaction, whose abort gives it back. Only one request in the common case (none
     * refused); nothing sent while the consumer is not connected: its requests would fail at once.
     */
    private CompletableFuture<Void> takeInAlone(List<MessageId> inputs, Transaction transaction, Throwable failed) {
        if (!consumer.isConnected()) {
            return CompletableFuture.completedFuture(null);
        }
        log.info(
                "subscription '{}': the acknowledgement of {} inputs in their transaction failed ({}); each is sent"
                        + " again alone, so that the abort gives back every one the broker did not refuse",
                subscription,
                inputs.size(),
                // As text: the broker's answer says which input it refused; a stack trace would say nothing more.
                String.valueOf(TransactionEnds.unwrap(failed)));
        CompletableFuture<?>[] requests = new CompletableFuture<?>[inputs.size()];
        for (int i = 0; i < requests.length; i++) {
            try {
                requests[i] = consumer.acknowledgeAsync(inputs.get(i), transaction);
            } catch (RuntimeException closed) {
                requests[i] = CompletableFuture.failedFuture(closed);
            }
        }
        return CompletableFuture.allOf(requests).handle((answered, refused) -> null);
    }

    @Override
    public void negativeAcknowledge(Message<?> message) {
        consumer.negativeAcknowledge(message);
    }
}
