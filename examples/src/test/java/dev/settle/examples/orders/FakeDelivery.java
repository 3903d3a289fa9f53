package dev.settle.examples.orders;

import dev.settle.sdk.Delivery;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/** A delivery of a string payload on a given attempt, capped at five attempts like the example manifest. */
record FakeDelivery(String value, int attempt) implements Delivery<String> {

    static FakeDelivery firstAttempt(String value) {
        return new FakeDelivery(value, 1);
    }

    @Override
    public byte[] data() {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Optional<String> key() {
        return Optional.empty();
    }

    @Override
    public Map<String, String> properties() {
        return Map.of();
    }

    @Override
    public String topic() {
        return "persistent://public/default/orders";
    }

    @Override
    public String messageId() {
        return "12:3:-1:-1";
    }

    @Override
    public Instant publishTime() {
        return Instant.parse("2026-01-01T00:00:00Z");
    }

    @Override
    public OptionalInt maxAttempts() {
        return OptionalInt.of(5);
    }
}
