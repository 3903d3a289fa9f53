package dev.settle.docs;

// docs/testing.md shows what follows, as it is (TestingDocTest checks it).
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.manifest.FunctionSettings;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.test.DeadLetterMessage;
import dev.settle.test.Delivered;
import dev.settle.test.Published;
import dev.settle.test.SettleTestDriver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class EnrichFunction implements Function<String, String> {
    @Override
    public String process(String order, Context context) {
        if (order.startsWith("poison")) {
            throw new IllegalArgumentException("cannot enrich " + order);
        }
        context.getLogger().info("enriching {}", order);
        context.recordMetric("order_length", order.length());
        return order.toUpperCase() + context.getUserConfigValueOrDefault("suffix", "");
    }
}

class EnrichFunctionTest {
    private SettleTestDriver settle;

    @BeforeEach
    void start() throws Exception {
        SubscriptionSpec subscription = SubscriptionSpec.builder("enrich", List.of("orders"))
                .function(
                        EnrichFunction.class.getName(),
                        new FunctionSettings(Optional.of("orders-enriched"), Optional.empty(), Map.of()))
                .config(Map.of("suffix", " (enriched)"))
                .deadLetter(3, "orders-dlq")
                .build();
        settle = SettleTestDriver.forFunction(new EnrichFunction(), String.class, String.class, subscription);
    }

    @AfterEach
    void stop() {
        settle.close();
    }

    @Test
    void theReturnValueIsPublishedWithTheInputsKeyAndPropertiesBeforeTheInputIsAcknowledged() {
        settle.message("o-1 widget").key("o-1").property("trace", "t-1").send();

        assertThat(settle.outputs("orders-enriched"))
                .extracting(
                        Published::value,
                        Published::key,
                        output -> output.properties().get("trace"))
                .containsExactly(tuple("O-1 WIDGET (enriched)", Optional.of("o-1"), "t-1"));
        // As under Pulsar Functions, each output also says where it came from.
        assertThat(settle.outputs("orders-enriched").get(0).properties())
                .containsKeys("__pfn_input_topic__", "__pfn_input_msg_id__");
        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
        assertThat(settle.function().logged()).containsExactly("INFO enriching o-1 widget");
        assertThat(settle.function().metrics()).containsEntry("order_length", List.of(10.0));
    }

    @Test
    void anInputWhoseOutputCannotBeStoredComesBackAfterTheFailureBackoff() {
        settle.failPublishesTo("orders-enriched");
        settle.send("o-2 gadget");
        assertThat(settle.subscription().unacknowledged()).isEqualTo(1);

        settle.acceptPublishesTo("orders-enriched");
        settle.advance(Duration.ofMillis(100)); // the default failure backoff's first wait

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome)
                .containsExactly(tuple(1, Settled.ERROR), tuple(2, Settled.ACK));
        assertThat(settle.outputs("orders-enriched"))
                .extracting(Published::value)
                .containsExactly("O-2 GADGET (enriched)");
    }

    @Test
    void aPoisonOrderIsTriedThreeTimesThenDeadLettered() {
        settle.send("poison pill");
        settle.advance(Duration.ofSeconds(1));

        assertThat(settle.deliveries()).extracting(Delivered::attempt).containsExactly(1, 2, 3);
        assertThat(settle.deadLetters()).extracting(DeadLetterMessage::text).containsExactly("poison pill");
        assertThat(settle.outputs()).isEmpty();
    }
}
