package dev.settle.examples.orders;

import dev.settle.sdk.Delivery;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/** A delivery of an order, already decoded, on a given attempt, capped at five attempts like the example manifest. */
record FakeDelivery(Order value, int attempt) implements Delivery<Order> {

    static FakeDelivery firstAttempt(Order value) {
        return new FakeDelivery(value, 1);
    }

    @Override
    public byte[] data() {
        // The handler works with the decoded value; a test that reaches for the bytes is testing something else.
        throw new UnsupportedOperationException("the order handler reads value(), not data()");
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
