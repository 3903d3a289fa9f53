package dev.settle.sdk;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One delivery of a message to a handler: the message and how many times it has been delivered.
 *
 * @param <T> the decoded message type
 * @since 0.1
 */
public interface Delivery<T> {

    /**
     * The message payload decoded to the handler's type.
     *
     * @return the decoded value, never {@code null}
     * @since 0.1
     */
    T value();

    /**
     * The raw payload bytes as published.
     *
     * @return a copy of the payload, never {@code null} (empty for an empty message)
     * @since 0.1
     */
    byte[] data();

    /**
     * The message key the producer set, which also decides ordering under {@code concurrency}.
     *
     * @return the key, or empty when the message has none
     * @since 0.1
     */
    Optional<String> key();

    /**
     * The message properties the producer set.
     *
     * @return an unmodifiable map, empty when there are none, never {@code null}
     * @since 0.1
     */
    Map<String, String> properties();

    /**
     * The fully qualified topic the message was published on, such as
     * {@code persistent://public/default/orders} (a partition's name on a partitioned topic).
     *
     * @return the topic name, never {@code null}
     * @since 0.1
     */
    String topic();

    /**
     * The Pulsar message id in its printed form ({@code ledger:entry:partition:batchIndex}); the same on
     * every redelivery of this message.
     *
     * @return the message id, never {@code null}
     * @since 0.1
     */
    String messageId();

    /**
     * When the producer published the message, by the broker's clock.
     *
     * @return the publish time, never {@code null}
     * @since 0.1
     */
    Instant publishTime();

    /**
     * Which delivery this is, starting at 1: the broker's redelivery count plus one.
     *
     * <p>The count rises on {@code Shared} and {@code Key_Shared} subscriptions only; on {@code Exclusive} and
     * {@code Failover} the broker keeps none and this is always 1. A consumer that crashes or disconnects while
     * holding the message gives it back without raising the count.
     *
     * @return the attempt number, at least 1
     * @since 0.1
     */
    int attempt();

    /**
     * The subscription's {@code maxAttempts}: after a failed attempt with this number the message goes to the
     * dead-letter topic instead of coming back.
     *
     * @return the cap, or empty when the subscription has no dead-letter topic
     * @since 0.1
     */
    OptionalInt maxAttempts();

    /**
     * Whether a retry of this delivery sends the message to the dead-letter topic rather than back.
     *
     * @return {@code true} when {@link #attempt()} has reached {@link #maxAttempts()}
     * @since 0.1
     */
    default boolean isLastAttempt() {
        OptionalInt max = maxAttempts();
        return max.isPresent() && attempt() >= max.getAsInt();
    }

    /**
     * The W3C trace context of this handling's span, as message and HTTP headers carry it: {@code traceparent}, and
     * {@code tracestate} when there is one. Put these on a call the handler makes (an HTTP request, say) and the
     * trace goes on there; what the handler publishes through the runtime carries it already.
     *
     * @return the context, unmodifiable; empty when the runtime traces nothing (the manifest's {@code tracing})
     * @since 0.3
     */
    default Map<String, String> traceContext() {
        return Map.of();
    }

    /**
     * Asks for more time for this call: its deadline becomes {@code duration} from now, unless it is later already.
     * A call that runs past its deadline (the subscription's {@code handlerTimeout} from the call's start, unless
     * extended) is interrupted and settled as a {@code timeout} failure, and what it publishes afterwards is refused;
     * call this as often as needed from a long call, each time before the deadline.
     *
     * <p>The default throws, so a delivery made outside the runtime (a test's own) says it cannot extend rather than
     * pretend it did; the runtime's and the test kit's deliveries implement it.
     *
     * @param duration how long from now the call may still run; positive, never {@code null}
     * @throws IllegalArgumentException when {@code duration} is zero or negative
     * @throws IllegalStateException when the call is over (returned or timed out), or the subscription cannot hold a
     *     call that long (at {@code guarantee: exactly-once}, past {@code handlerTimeout}: its transaction's timeout
     *     is fixed when it begins)
     * @throws UnsupportedOperationException when this delivery was not made by a runtime
     * @since 0.4
     */
    default void extend(Duration duration) {
        throw new UnsupportedOperationException(
                "this Delivery (" + getClass().getName() + ") was not made by the Settle runtime and cannot extend"
                        + " its call's deadline; implement extend(Duration) in the test's own Delivery");
    }
}
