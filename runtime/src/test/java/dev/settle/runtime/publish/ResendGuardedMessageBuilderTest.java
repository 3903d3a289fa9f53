package dev.settle.runtime.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.junit.jupiter.api.Test;

class ResendGuardedMessageBuilderTest {
    private static final String TOPIC = "persistent://public/default/orders-out";

    /** The producer's last disconnection, as the client sets it (milliseconds; 0 before any). */
    private final AtomicLong disconnectedAt = new AtomicLong();

    private final CompletableFuture<MessageId> confirmed = new CompletableFuture<>();
    private final List<String> set = new ArrayList<>();

    @Test
    void aSendConfirmedWithoutADropCompletesWithItsId() {
        disconnectedAt.set(1_000);
        CompletableFuture<MessageId> sent = guarded().value("seen m-1").sendAsync();

        confirmed.complete(MessageId.earliest);

        assertThat(sent).isCompletedWithValue(MessageId.earliest);
        assertThat(set).containsExactly("value seen m-1");
    }

    @Test
    void aSendWhoseConnectionDroppedWhileOnItsWayFailsThoughTheClientConfirmedIt() {
        TypedMessageBuilder<String> message = guarded();
        CompletableFuture<MessageId> sent = message.value("seen m-1").sendAsync();

        // The connection drops with the send unconfirmed; the client sends it again and the copy is confirmed.
        disconnectedAt.set(2_000);
        confirmed.complete(MessageId.earliest);

        assertThat(sent).isCompletedExceptionally();
        assertThat(failure(sent))
                .isInstanceOf(PulsarClientException.ConnectException.class)
                .hasMessageContaining(TOPIC)
                .hasMessageContaining("may hold it twice")
                .hasMessageContaining("its transaction is aborted");
    }

    @Test
    void aDropBeforeTheMessageWasMadeDoesNotFailIt() {
        // The send goes out on the new connection, once: nothing to send again.
        disconnectedAt.set(2_000);
        CompletableFuture<MessageId> sent = guarded().value("seen m-1").sendAsync();

        confirmed.complete(MessageId.earliest);

        assertThat(sent).isCompletedWithValue(MessageId.earliest);
    }

    @Test
    void aSendTheClientFailedFailsWithTheClientsCause() {
        CompletableFuture<MessageId> sent = guarded().value("seen m-1").sendAsync();

        confirmed.completeExceptionally(new PulsarClientException.AlreadyClosedException("closed"));

        assertThat(failure(sent)).isInstanceOf(PulsarClientException.AlreadyClosedException.class);
    }

    /** What {@code sent} failed with, as a caller of {@code send()} sees it (not the future's wrapper). */
    private static Throwable failure(CompletableFuture<MessageId> sent) {
        Throwable error = sent.handle((id, failed) -> failed).join();
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    private TypedMessageBuilder<String> guarded() {
        return new ResendGuardedMessageBuilder<>(message(), producer());
    }

    @SuppressWarnings("unchecked")
    private TypedMessageBuilder<String> message() {
        return (TypedMessageBuilder<String>) Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {TypedMessageBuilder.class}, (proxy, method, args) -> {
                    if (method.getName().equals("sendAsync")) {
                        return confirmed;
                    }
                    if (method.getName().equals("value")) {
                        set.add("value " + args[0]);
                        return proxy;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private Producer<?> producer() {
        return (Producer<?>) Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {Producer.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getLastDisconnectedTimestamp" -> disconnectedAt.get();
                    case "getTopic" -> TOPIC;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
