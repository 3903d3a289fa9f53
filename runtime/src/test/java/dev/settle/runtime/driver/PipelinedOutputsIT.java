package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.OutputOptions;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.publish.Outputs;
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
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Outputs are pipelined (docs/functions.md): a call's permit goes back when the call returns, while its input waits
 * for its outputs on its own; the input is acknowledged only once every send of its call is stored; a failed send
 * retries the input with the failure backoff; at {@code maxPendingOutputs} no further message is handed over.
 */
@ExtendWith(DriverFixtures.class)
class PipelinedOutputsIT {
    private static final int MAX_PENDING = 3;

    /** Outputs nobody asks for a message: the port adds its sends itself, completed by the test. */
    private static final Outputs UNUSED = new Outputs() {
        @Override
        public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) throws PulsarClientException {
            throw new PulsarClientException("not used");
        }

        @Override
        public void close() {}
    };

    /** A port that sends one output per call, whose send the test completes by hand, and acknowledges. */
    private static final class PublishingPort implements HandlerPort {
        final BlockingQueue<Call> calls = new LinkedBlockingQueue<>();

        record Call(Message<?> message, CompletableFuture<MessageId> send) {}

        @Override
        public Schema<?> schema() {
            return Schema.STRING;
        }

        @Override
        public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
            CompletableFuture<MessageId> send = new CompletableFuture<>();
            work.outputs(UNUSED).add(send);
            calls.add(new Call(work.message(), send));
            return CompletableFuture.completedFuture(Outcome.ack());
        }
    }

    /**
     * Concurrency 1, where the bound is exact; above it, calls already running when the bound is reached may add
     * their sends (up to {@code concurrency - 1} calls' worth, docs/manifest.md).
     */
    @Test
    void callsGoOnWhileOutputsArePendingAndInputsAreAckedOnlyOnceTheirOutputsAreStored(DriverFixture pulsar)
            throws Exception {
        int concurrency = 1;
        String topic = topic("pipelined");
        PublishingPort port = new PublishingPort();
        RecordingMetrics metrics = new RecordingMetrics();
        pulsar.start(
                spec(topic, SubscriptionKind.SHARED)
                        .concurrency(concurrency)
                        .outputs(OutputOptions.DEFAULT.withMaxPendingOutputs(MAX_PENDING))
                        .failureBackoff(
                                Optional.of(new FailureBackoff(Duration.ofMillis(300), 2, Duration.ofSeconds(1))))
                        .build(),
                port,
                metrics);
        int messages = MAX_PENDING + 3;
        for (int i = 0; i < messages; i++) {
            pulsar.send(topic, "m" + i, null, Map.of());
        }

        // More calls than permits ran, each with its output still pending: the permit went back at the return.
        await().atMost(Duration.ofSeconds(30)).until(() -> port.calls.size() == MAX_PENDING);
        // At the bound no further message is handed over, and nothing is acknowledged before its output is stored.
        Waits.during(
                "no call beyond the bound",
                Duration.ofMillis(500),
                () -> port.calls.size() == MAX_PENDING,
                () -> port.calls.size() + " calls");
        assertThat(port.calls).hasSize(MAX_PENDING);
        assertThat(pulsar.backlog(topic, "sub")).isEqualTo(messages);
        assertThat(metrics.count(Settled.ACK)).isZero();

        // One output stored: its input is acknowledged, and there is room for one more call.
        PublishingPort.Call first = port.calls.poll();
        first.send().complete(MessageId.earliest);
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == messages - 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> port.calls.size() == MAX_PENDING);

        // One output not stored: its input is a failure, held for the failure backoff, then handled again.
        PublishingPort.Call failing = port.calls.poll();
        long failedAt = System.nanoTime();
        failing.send().completeExceptionally(new PulsarClientException.TimeoutException("not stored"));
        await().atMost(Duration.ofSeconds(10)).until(() -> metrics.count(Settled.ERROR) == 1);
        assertThat(pulsar.backlog(topic, "sub")).isEqualTo(messages - 1);

        PublishingPort.Call call;
        PublishingPort.Call retried = null;
        int completed = 0;
        while ((call = port.calls.poll(5, TimeUnit.SECONDS)) != null) {
            if (call.message().getMessageId().equals(failing.message().getMessageId())) {
                retried = call;
                assertThat(Duration.ofNanos(System.nanoTime() - failedAt))
                        .isGreaterThanOrEqualTo(Duration.ofMillis(250));
            }
            call.send().complete(MessageId.earliest);
            completed++;
        }
        assertThat(retried).as("the input whose output failed, handled again").isNotNull();
        assertThat(retried.message().getRedeliveryCount()).isEqualTo(1);
        assertThat(completed).isEqualTo(messages - 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
        assertThat(metrics.count(Settled.ACK)).isEqualTo(messages);
        assertThat(metrics.inFlight).hasValue(0);
    }
}
