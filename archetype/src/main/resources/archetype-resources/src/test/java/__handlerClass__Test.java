package ${package};

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.test.Delivered;
import dev.settle.test.SettleTestDriver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The handler on the Settle test kit: settled by Settle's own rules, counted as the broker counts. */
class ${handlerClass}Test {
    private SettleTestDriver settle;

    @BeforeEach
    void start() throws Exception {
        SubscriptionSpec subscription = SubscriptionSpec.builder("${artifactId}", List.of("${topic}"))
                .deadLetter(5, "${topic}-${artifactId}-dlq")
                .config(Map.of("greeting", "hi"))
                .build();
        settle = SettleTestDriver.forHandler(new ${handlerClass}(), String.class, subscription);
    }

    @AfterEach
    void stop() {
        settle.close();
    }

    @Test
    void aNameIsGreetedAndAcknowledged() {
        settle.send("Ada");

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome)
                .containsExactly(tuple(1, Settled.ACK));
    }

    @Test
    void aBlankNameIsDropped() {
        settle.send("  ");

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.DROP);
    }

    @Test
    void aBusyNameComesBackTenSecondsLaterAsTheSecondAttempt() {
        settle.send("busy");
        settle.advance(Duration.ofSeconds(9));
        assertThat(settle.deliveries()).hasSize(1);

        settle.advance(Duration.ofSeconds(1));

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome, Delivered::at)
                .containsExactly(
                        tuple(1, Settled.RETRY_AFTER, Duration.ZERO), tuple(2, Settled.ACK, Duration.ofSeconds(10)));
    }
}
