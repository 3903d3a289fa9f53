package dev.settle.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.manifest.BatchLimits;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** A batch handler (issue 47) on the kit: gathered on the kit's clock, split and settled by the runtime's rules. */
class BatchHandlerTest {
    private final List<List<String>> calls = new CopyOnWriteArrayList<>();

    /** Records each call; throws for the whole call when it holds {@code poison}; acknowledges the rest. */
    private final BatchHandler<String> bulk = batch -> {
        calls.add(batch.stream().map(Delivery::value).toList());
        if (batch.stream().anyMatch(delivery -> delivery.value().equals("poison"))) {
            throw new IllegalStateException("bulk write refused");
        }
        return BatchResult.acknowledgeAll(batch);
    };

    private static SubscriptionSpec spec(int concurrency) {
        return SubscriptionSpec.builder("bulk", List.of("orders"))
                .deadLetter(3, "orders-dlq")
                .concurrency(concurrency)
                .batch(new BatchLimits(4, BatchLimits.DEFAULT_MAX_BYTES, Duration.ofMillis(50)))
                .build();
    }

    @Test
    void sentMessagesGatherUntilTheBatchIsFull() throws Exception {
        try (SettleTestDriver settle = SettleTestDriver.forBatchHandler(bulk, String.class, spec(1))) {
            settle.send("a");
            settle.send("b");
            settle.send("c");
            assertThat(calls).as("gathering").isEmpty();

            settle.send("d");

            assertThat(calls).containsExactly(List.of("a", "b", "c", "d"));
            assertThat(settle.subscription().outcomes())
                    .containsOnly(Settled.ACK)
                    .hasSize(4);
            assertThat(settle.metric("settle_batch_size", "subscription", "bulk"))
                    .isEqualTo(1);
        }
    }

    @Test
    void aBatchThatIsNotFullIsCalledOnceTheClockPassesItsMaxWait() throws Exception {
        try (SettleTestDriver settle = SettleTestDriver.forBatchHandler(bulk, String.class, spec(1))) {
            settle.send("a");
            settle.advance(Duration.ofMillis(49));
            assertThat(calls).isEmpty();

            settle.advance(Duration.ofMillis(1));

            assertThat(calls).containsExactly(List.of("a"));
            assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
        }
    }

    @Test
    void aPoisonMessageIsFoundByHalvingAndDeadLetteredAloneAtItsCapWhileTheOthersAreAcknowledgedOnce()
            throws Exception {
        for (int concurrency : new int[] {1, 2}) {
            calls.clear();
            try (SettleTestDriver settle = SettleTestDriver.forBatchHandler(bulk, String.class, spec(concurrency))) {
                List.of("a", "poison", "c", "d").forEach(settle::send);
                settle.advance(Duration.ofSeconds(10));

                assertThat(calls.subList(0, 5))
                        .as("concurrency %d: the first call and its halves", concurrency)
                        .containsExactly(
                                List.of("a", "poison", "c", "d"),
                                List.of("a", "poison"),
                                List.of("a"),
                                List.of("poison"),
                                List.of("c", "d"));
                assertThat(settle.deliveries())
                        .filteredOn(delivery -> !delivery.value().equals("poison"))
                        .extracting(Delivered::value, Delivered::attempt, Delivered::outcome)
                        .containsExactlyInAnyOrder(
                                tuple("a", 1, Settled.ACK), tuple("c", 1, Settled.ACK), tuple("d", 1, Settled.ACK));
                assertThat(settle.deadLetters()).hasSize(1);
                assertThat(settle.subscription().unacknowledged()).isZero();
            }
        }
    }
}
