package ${package};

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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The function on the Settle test kit: its outputs recorded, settled by Settle's own rules. */
class ${functionClass}Test {
    private SettleTestDriver settle;

    @BeforeEach
    void start() throws Exception {
        SubscriptionSpec subscription = SubscriptionSpec.builder("${artifactId}", List.of("${topic}"))
                .function(
                        ${functionClass}.class.getName(),
                        new FunctionSettings(Optional.of("${outputTopic}"), Optional.empty(), Map.of()))
                .config(Map.of("greeting", "hi"))
                .deadLetter(5, "${topic}-${artifactId}-dlq")
                .build();
        settle = SettleTestDriver.forFunction(new ${functionClass}(), String.class, String.class, subscription);
    }

    @AfterEach
    void stop() {
        settle.close();
    }

    @Test
    void aNameIsGreetedOnTheOutputTopicWithItsKeyThenAcknowledged() {
        settle.message("Ada").key("k-1").send();

        assertThat(settle.outputs("${outputTopic}"))
                .extracting(Published::value, Published::key)
                .containsExactly(tuple("hi, Ada", Optional.of("k-1")));
        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
        assertThat(settle.function().logged()).containsExactly("INFO greeting Ada");
    }

    @Test
    void aBlankNamePublishesNothingAndIsAcknowledged() {
        settle.send("  ");

        assertThat(settle.outputs()).isEmpty();
        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
    }

    @Test
    void aPoisonNameIsTriedFiveTimesThenDeadLettered() {
        settle.send("poison");
        settle.advance(Duration.ofMinutes(1)); // past every failure backoff

        assertThat(settle.deliveries()).extracting(Delivered::attempt).containsExactly(1, 2, 3, 4, 5);
        assertThat(settle.deadLetters()).extracting(DeadLetterMessage::text).containsExactly("poison");
        assertThat(settle.outputs()).isEmpty();
    }
}
