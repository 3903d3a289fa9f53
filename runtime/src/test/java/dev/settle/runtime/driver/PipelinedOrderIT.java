package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.publish.PulsarOutputs;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a failed send does to the order of one key's outputs (docs/functions.md, "Order"): the input comes back after
 * the failure backoff, while the outputs of later inputs of the key, already sent, are stored before its own.
 */
@ExtendWith(DriverFixtures.class)
class PipelinedOrderIT {

    @Test
    void aFailedSendIsStoredAfterTheLaterOutputsOfItsKey(DriverFixture pulsar) throws Exception {
        String in = topic("order-in");
        String out = topic("order-out");
        AtomicBoolean failedOnce = new AtomicBoolean();
        try (PulsarOutputs outputs = new PulsarOutputs(
                () -> pulsar.client,
                "order test",
                dev.settle.runtime.publish.ProducerSettings.FUNCTIONS_DEFAULT,
                pulsar.time)) {
            // Sends each value to the output topic through the runtime's producer; the first send of "2" fails.
            HandlerPort port = new HandlerPort() {
                @Override
                public Schema<?> schema() {
                    return Schema.STRING;
                }

                @Override
                public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
                    String value = new String(work.message().getData(), java.nio.charset.StandardCharsets.UTF_8);
                    var publishes = work.outputs(outputs);
                    if (value.equals("2") && failedOnce.compareAndSet(false, true)) {
                        publishes.add(CompletableFuture.failedFuture(
                                new PulsarClientException.TimeoutException("the broker did not store it")));
                    } else {
                        publishes
                                .newMessage(out, Schema.STRING)
                                .key("k")
                                .value(value)
                                .sendAsync();
                    }
                    return CompletableFuture.completedFuture(Outcome.ack());
                }
            };
            // All five wait in the backlog before the subscription starts: "3" to "5" are handled within
            // milliseconds of "2", well inside its 500 ms backoff, however slowly a loaded machine publishes.
            for (int i = 1; i <= 5; i++) {
                pulsar.send(in, String.valueOf(i), "k", Map.of());
            }
            pulsar.start(
                    spec(in, SubscriptionKind.SHARED)
                            .failureBackoff(
                                    Optional.of(new FailureBackoff(Duration.ofMillis(500), 2, Duration.ofSeconds(1))))
                            .build(),
                    port,
                    new RecordingMetrics());

            List<String> stored = pulsar.readAll(out, 5, Duration.ofSeconds(30)).stream()
                    .map(Message::getValue)
                    .toList();
            // One key, calls in order, one producer: in call order, but "2" came back after the backoff.
            assertThat(stored).containsExactly("1", "3", "4", "5", "2");
            await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(in, "sub") == 0);
        }
    }
}
