package dev.settle.runtime.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

class PulsarOutputsTest {
    private final ManualTime time = new ManualTime();

    /** The retry ran on a JDK delayed executor of its own (issue 41): no test could move it. */
    @Test
    void aPreparedTopicThatCannotBeWrittenIsAskedForAgainOnTheRuntimesClock() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        try (PulsarOutputs outputs = new PulsarOutputs(
                () -> {
                    asked.incrementAndGet();
                    throw new IllegalStateException("no client yet");
                },
                "subscription 'sums'",
                ProducerSettings.FUNCTIONS_DEFAULT,
                time)) {
            outputs.prepare("persistent://public/default/sums-out", Schema.STRING);
            assertThat(asked).hasValue(1);

            time.advance(PulsarOutputs.RETRY.minus(Duration.ofMillis(1)));
            assertThat(asked).hasValue(1);
            time.advance(Duration.ofMillis(1));

            assertThat(asked).hasValue(2);
            assertThat(outputs.notReady())
                    .hasValueSatisfying(why -> assertThat(why)
                            .contains("persistent://public/default/sums-out")
                            .contains("no client yet"));
        }
        time.advance(PulsarOutputs.RETRY);
        assertThat(asked).as("not asked again once closed").hasValue(2);
    }
}
