package dev.settle.test;

import dev.settle.runtime.driver.Settled;
import java.time.Duration;
import java.util.Optional;

/**
 * One delivery to the handler and how the runtime settled it.
 *
 * @param subscription the subscription that received it
 * @param topic the topic it was published to
 * @param messageId the message's id, as the handler's {@code Delivery.messageId()} gave it
 * @param key the message's key, if it had one
 * @param value the payload as the subscription decodes it ({@code String}, {@code byte[]} or the handler's
 *     class: for a handler loaded from its JAR, that JAR's class, which is not the test's own copy of it);
 *     {@code null} when it cannot be decoded
 * @param attempt {@code Delivery.attempt()}: the broker's redelivery count + 1 (always 1 on Exclusive and Failover)
 * @param outcome how the runtime settled it; its {@link Settled#label()} is the {@code outcome} label of
 *     {@code settle_outcomes_total}
 * @param at when, on the test's clock, since the driver was created
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API").
 */
public record Delivered(
        String subscription,
        String topic,
        String messageId,
        Optional<String> key,
        Object value,
        int attempt,
        Settled outcome,
        Duration at) {

    /** {@code value} as text: a {@code String} as it is, anything else through {@code toString()}. */
    public String text() {
        return value instanceof byte[] bytes
                ? new String(bytes, java.nio.charset.StandardCharsets.UTF_8)
                : String.valueOf(value);
    }
}
