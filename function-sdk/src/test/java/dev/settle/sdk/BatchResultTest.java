package dev.settle.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class BatchResultTest {

    @Test
    void recordsEachOutcomeInTheOrderGivenRepeatsIncluded() {
        Delivery<String> first = delivery(1, OptionalInt.empty());
        Delivery<String> second = delivery(1, OptionalInt.empty());

        BatchResult result = BatchResult.create()
                .ack(first)
                .retry(second)
                .retryAfter(first, Duration.ofSeconds(1))
                .drop(second);

        assertThat(result.entries())
                .containsExactly(
                        new BatchResult.Entry(first, Outcome.ack()),
                        new BatchResult.Entry(second, Outcome.retry()),
                        new BatchResult.Entry(first, Outcome.retryAfter(Duration.ofSeconds(1))),
                        new BatchResult.Entry(second, Outcome.drop()));
    }

    @Test
    void acknowledgeAllGivesEveryDeliveryAnAck() {
        Delivery<String> first = delivery(1, OptionalInt.empty());
        Delivery<String> second = delivery(2, OptionalInt.empty());

        assertThat(BatchResult.acknowledgeAll(List.of(first, second)).entries())
                .extracting(BatchResult.Entry::outcome)
                .containsExactly(Outcome.ack(), Outcome.ack());
    }

    @Test
    void aNullOutcomeIsRefusedSayingToLeaveTheDeliveryOut() {
        assertThatThrownBy(() -> BatchResult.create().outcome(delivery(1, OptionalInt.empty()), null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("leave the delivery out");
    }

    @Test
    void theEntriesCannotBeChangedFromOutside() {
        BatchResult result = BatchResult.create();
        assertThatThrownBy(() -> result.entries().clear()).isInstanceOf(UnsupportedOperationException.class);
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
