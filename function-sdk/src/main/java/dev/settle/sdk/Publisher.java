package dev.settle.sdk;

import java.util.Map;

/**
 * Publishes values to one topic on behalf of the delivery being handled: the delivery's acknowledgement is sent
 * only after every value published for it is durable (stored by the broker), and if any of them fails the delivery
 * is retried instead, as a failure (the failure backoff, then the dead-letter cap). Only an {@link Outcome#ack()}
 * waits: {@code retry}, {@code retryAfter}, {@code drop} and no outcome are applied at once, whatever was
 * published.
 *
 * <p>Obtain publishers in {@link Handler#open(HandlerContext)} with {@link HandlerContext#publisher(String, Class)};
 * call them from {@link Handler#handle(Delivery)} with the delivery being handled, from any thread, before
 * {@code handle} returns. A retried delivery publishes again: what it published before may be there twice, so
 * consumers of the topic must be idempotent too. Thread-safe.
 *
 * @param <T> the type of the values: {@code String} (Pulsar's STRING schema), {@code byte[]} (BYTES), or a class,
 *     published as JSON
 * @since 0.2
 */
public interface Publisher<T> {

    /**
     * The topic this publisher publishes to.
     *
     * @return the topic as given to {@link HandlerContext#publisher(String, Class)}, never {@code null}
     * @since 0.2
     */
    String topic();

    /**
     * Publishes {@code value} with the delivery's key (if it has one), tied to {@code delivery}.
     *
     * @param delivery the delivery being handled, whose acknowledgement waits for this send; not {@code null}
     * @param value what to publish; not {@code null}
     * @throws NullPointerException when {@code delivery} or {@code value} is {@code null}
     * @throws IllegalArgumentException when {@code delivery} is not one the runtime handed to the handler
     * @since 0.2
     */
    void publish(Delivery<?> delivery, T value);

    /**
     * Publishes {@code value} with the given key and properties, tied to {@code delivery}.
     *
     * @param delivery the delivery being handled, whose acknowledgement waits for this send; not {@code null}
     * @param value what to publish; not {@code null}
     * @param key the message key, or {@code null} for none
     * @param properties the message properties; not {@code null}, may be empty
     * @throws NullPointerException when {@code delivery}, {@code value} or {@code properties} is {@code null}
     * @throws IllegalArgumentException when {@code delivery} is not one the runtime handed to the handler
     * @since 0.2
     */
    void publish(Delivery<?> delivery, T value, String key, Map<String, String> properties);
}
