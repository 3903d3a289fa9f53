package ${package};

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.manifest.BatchLimits;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.test.Delivered;
import dev.settle.test.SettleTestDriver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The batch handler on the Settle test kit: gathered, split and settled by Settle's own rules. */
class Batch${handlerClass}Test {
    private SettleTestDriver settle;

    @BeforeEach
    void start() throws Exception {
        SubscriptionSpec subscription = SubscriptionSpec.builder("${artifactId}-batch", List.of("${topic}"))
                .deadLetter(3, "${topic}-${artifactId}-batch-dlq")
                // A batch is called once it holds 4 names, or 20 ms after its first.
                .batch(new BatchLimits(4, BatchLimits.DEFAULT_MAX_BYTES, Duration.ofMillis(20)))
                .build();
        settle = SettleTestDriver.forBatchHandler(new Batch${handlerClass}(), String.class, subscription);
    }

    @AfterEach
    void stop() {
        settle.close();
    }

    @Test
    void aBatchIsCalledOnceFullOrOnceItsMaxWaitHasPassed() {
        settle.send("Ada");
        settle.send("  ");
        assertThat(settle.deliveries()).as("gathering").isEmpty();

        settle.advance(Duration.ofMillis(20));

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK, Settled.DROP);
    }

    @Test
    void aPoisonNameIsFoundByHalvingTheBatchAndDeadLetteredAloneWhileTheOthersAreGreeted() {
        settle.send("Ada");
        settle.send("Grace");
        settle.send("poison");
        settle.send("Alan");
        // Past the failure backoff of the poison name's three attempts.
        settle.advance(Duration.ofSeconds(10));

        assertThat(settle.deliveries())
                .filteredOn(delivery -> delivery.outcome() == Settled.ACK)
                .extracting(Delivered::value, Delivered::attempt)
                .containsExactlyInAnyOrder(tuple("Ada", 1), tuple("Grace", 1), tuple("Alan", 1));
        assertThat(settle.deadLetters())
                .extracting(letter -> new String(letter.data(), StandardCharsets.UTF_8))
                .containsExactly("poison");
        assertThat(settle.metric("settle_batch_splits_total", "subscription", "${artifactId}-batch"))
                .as("calls split to find it")
                .isPositive();
    }
}
