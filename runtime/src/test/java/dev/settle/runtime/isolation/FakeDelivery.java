package dev.settle.runtime.isolation;

import dev.settle.sdk.Delivery;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/** The smallest delivery: a value on its first attempt, on a made-up topic. */
record FakeDelivery(Object value, int attempt) implements Delivery<Object> {

    static FakeDelivery of(Object value) {
        return new FakeDelivery(value, 1);
    }

    @Override
    public byte[] data() {
        return String.valueOf(value).getBytes(StandardCharsets.UTF_8);
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
        return "persistent://public/default/test";
    }

    @Override
    public String messageId() {
        return "1:0:-1:-1";
    }

    @Override
    public Instant publishTime() {
        return Instant.EPOCH;
    }

    @Override
    public OptionalInt maxAttempts() {
        return OptionalInt.empty();
    }
}
