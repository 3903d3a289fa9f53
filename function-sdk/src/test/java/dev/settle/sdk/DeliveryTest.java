package dev.settle.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class DeliveryTest {

    @Test
    void theLastAttemptIsTheOneThatReachesTheCap() {
        assertThat(delivery(2, OptionalInt.of(3)).isLastAttempt()).isFalse();
        assertThat(delivery(3, OptionalInt.of(3)).isLastAttempt()).isTrue();
    }

    @Test
    void withoutACapNoAttemptIsTheLast() {
        assertThat(delivery(1_000, OptionalInt.empty()).isLastAttempt()).isFalse();
    }

    private static Delivery<String> delivery(int attempt, OptionalInt maxAttempts) {
        return new Delivery<>() {
            @Override
            public String value() {
                return "v";
            }

            @Override
            public byte[] data() {
                return new byte[0];
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
                return "persistent://public/default/t";
            }

            @Override
            public String messageId() {
                return "1:2:-1:-1";
            }

            @Override
            public Instant publishTime() {
                return Instant.EPOCH;
            }

            @Override
            public int attempt() {
                return attempt;
            }

            @Override
            public OptionalInt maxAttempts() {
                return maxAttempts;
            }
        };
    }
}
