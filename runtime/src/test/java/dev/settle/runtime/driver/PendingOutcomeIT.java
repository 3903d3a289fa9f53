package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.sdk.Outcome;
import dev.settle.testbroker.Waits;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An outcome that completes after the handler call returns (a function's output being published): the message is
 * settled when it completes, and holds its concurrency permit until then.
 */
@ExtendWith(DriverFixtures.class)
class PendingOutcomeIT {

    /** A port whose outcomes the test completes by hand. */
    private static final class PendingPort implements HandlerPort {
        final BlockingQueue<Pending> calls = new LinkedBlockingQueue<>();

        record Pending(Message<?> message, CompletableFuture<Outcome> outcome) {}

        @Override
        public Schema<?> schema() {
            return Schema.STRING;
        }

        @Override
        public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
            CompletableFuture<Outcome> outcome = new CompletableFuture<>();
            calls.add(new Pending(work.message(), outcome));
            return outcome;
        }
    }

    @ParameterizedTest(name = "concurrency {0}")
    @ValueSource(ints = {1, 2})
    void pendingOutcomesHoldTheirPermitsAndAckOnlyWhenTheyComplete(int concurrency, DriverFixture pulsar)
            throws Exception {
        String topic = topic("pending");
        PendingPort port = new PendingPort();
        RecordingMetrics metrics = new RecordingMetrics();
        SubscriptionDriver driver = pulsar.start(
                spec(topic, SubscriptionKind.SHARED).concurrency(concurrency).build(), port, metrics);
        for (int i = 0; i < concurrency + 2; i++) {
            pulsar.send(topic, "m" + i, null, Map.of());
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> port.calls.size() == concurrency);
        // Every permit is held by an outcome not yet complete: no further message is handed over.
        Waits.during(
                "no call beyond the permits",
                Duration.ofMillis(500),
                () -> port.calls.size() == concurrency,
                () -> port.calls.size() + " calls");
        assertThat(port.calls).hasSize(concurrency);
        assertThat(pulsar.backlog(topic, "sub")).isEqualTo(concurrency + 2);
        // A pending outcome counts as a call still running, so handlerTimeout sees one that never completes.
        assertThat(driver.longestRunningCall()).isGreaterThanOrEqualTo(Duration.ofMillis(450));

        PendingPort.Pending first = port.calls.poll();
        first.outcome().complete(Outcome.ack());
        await().atMost(Duration.ofSeconds(10)).until(() -> port.calls.size() == concurrency);
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == concurrency + 1);

        PendingPort.Pending next;
        while ((next = port.calls.poll(5, TimeUnit.SECONDS)) != null) {
            next.outcome().complete(Outcome.ack());
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
        assertThat(metrics.count(Settled.ACK)).isEqualTo(concurrency + 2);
        assertThat(metrics.inFlight).hasValue(0);
        assertThat(driver.longestRunningCall()).isEqualTo(Duration.ZERO);
    }

    @Test
    void anOutcomeCompletingExceptionallyIsAFailureRedeliveredWithCountPlusOne(DriverFixture pulsar) throws Exception {
        String topic = topic("pending-failure");
        PendingPort port = new PendingPort();
        RecordingMetrics metrics = new RecordingMetrics();
        pulsar.start(
                spec(topic, SubscriptionKind.SHARED)
                        .failureBackoff(Optional.empty())
                        .build(),
                port,
                metrics);
        pulsar.send(topic, "m", null, Map.of());

        PendingPort.Pending first = port.calls.poll(30, TimeUnit.SECONDS);
        assertThat(first).isNotNull();
        CompletableFuture.runAsync(
                () -> first.outcome().completeExceptionally(new IllegalStateException("output send failed")));
        PendingPort.Pending again = port.calls.poll(10, TimeUnit.SECONDS);
        assertThat(again).isNotNull();
        assertThat(again.message().getRedeliveryCount()).isEqualTo(1);
        assertThat(again.message().getMessageId()).isEqualTo(first.message().getMessageId());
        assertThat(metrics.count(Settled.ERROR)).isEqualTo(1);
        again.outcome().complete(Outcome.ack());
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
    }
}
