package dev.settle.runtime.driver;

import dev.settle.sdk.Delivery;
import java.util.Map;
import java.util.Optional;

/** What a test handler saw of one delivery, and when (nanoTime). */
record Seen(
        String messageId,
        String value,
        Optional<String> key,
        Map<String, String> properties,
        int attempt,
        long atNanos) {
    static Seen of(Delivery<String> delivery) {
        return new Seen(
                delivery.messageId(),
                delivery.value(),
                delivery.key(),
                delivery.properties(),
                delivery.attempt(),
                System.nanoTime());
    }
}
