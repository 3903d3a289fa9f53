package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.trace.OpenTelemetryTracing;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.schema.KeyValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * With {@code tracing: true} a message's trace goes on through its handling, the handling's outputs, its retries and
 * its dead letter (docs/observability.md, "Traces"), checked from the spans the runtime exports to the SDK's
 * in-memory exporter, and from the {@code traceparent} of the messages a downstream consumer reads.
 */
class TracingIT {
    private static final Duration WITHIN = Duration.ofSeconds(30);
    private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("settle.attempt");
    private static final TextMapGetter<Map<String, String>> PROPERTIES = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier.get(key);
        }
    };

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final InMemorySpanExporter exported = InMemorySpanExporter.create();
    private final OpenTelemetrySdk openTelemetry = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(exported))
                    .build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
    /** The upstream service, in the test: it starts each trace. */
    private final Tracer upstream = openTelemetry.getTracer("test-producer");

    @AfterEach
    void shutDown() {
        openTelemetry.close();
    }

    @Test
    void aFunctionsOutputContinuesTheProducersTraceThroughItsHandlingAndSendSpans() throws Exception {
        FunctionJars.identity(folder);
        String in = FunctionsIT.topic("traced-in");
        String out = in + "-out";
        Path manifest = manifest("identity", in, """
                function: com.example.identity.Identity
                jar: identity.jar
                output: %s
                """.formatted(out));
        try (Deployment deployment = Preflight.check(manifest, Map.of());
                Settle settle = traced(deployment);
                Consumer<String> downstream = FunctionTopics.downstream(pulsar.client(), out);
                Producer<String> producer = FunctionTopics.unbatched(pulsar.client(), in)) {
            await().atMost(WITHIN).until(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200);

            KeyValue<SpanContext, MessageId> sent = sendInTrace(producer, "hello");
            Message<String> output = downstream.receive(30, TimeUnit.SECONDS);
            assertThat(output).as("the output within 30 s").isNotNull();
            assertThat(output.getValue()).isEqualTo("hello");

            await().atMost(WITHIN).until(() -> named("process identity").size() == 1);
            SpanData handling = named("process identity").get(0);
            SpanData send = only("send " + out);
            String trace = sent.getKey().getTraceId();
            assertThat(handling.getKind()).isEqualTo(SpanKind.CONSUMER);
            assertThat(handling.getTraceId()).isEqualTo(trace);
            assertThat(handling.getParentSpanId()).isEqualTo(sent.getKey().getSpanId());
            assertThat(handling.getAttributes().asMap())
                    .containsEntry(AttributeKey.stringKey("messaging.destination.name"), in)
                    .containsEntry(AttributeKey.stringKey("messaging.destination.subscription.name"), "identity")
                    .containsEntry(
                            AttributeKey.stringKey("messaging.message.id"),
                            sent.getValue().toString())
                    .containsEntry(ATTEMPT, 1L)
                    .containsEntry(AttributeKey.stringKey("settle.outcome"), "ack")
                    .containsKey(AttributeKey.stringKey("settle.code"));
            assertThat(handling.getLinks()).isEmpty();
            assertThat(send.getKind()).isEqualTo(SpanKind.PRODUCER);
            assertThat(send.getTraceId()).isEqualTo(trace);
            assertThat(send.getParentSpanId()).isEqualTo(handling.getSpanId());
            // The handling ends once its output is stored: the send lies within it.
            assertThat(send.getEndEpochNanos()).isLessThanOrEqualTo(handling.getEndEpochNanos());

            // What the downstream consumer reads carries the send's context: its own spans join the same trace.
            SpanContext carried = carried(output.getProperties());
            assertThat(carried.getTraceId()).isEqualTo(trace);
            assertThat(carried.getSpanId()).isEqualTo(send.getSpanId());
        }
    }

    @Test
    void aMessageRetriedTwiceThenDeadLetteredIsOneTraceOfThreeLinkedHandlingsAndADeadLetterSpan() throws Exception {
        FunctionJars.throwing(folder);
        String in = FunctionsIT.topic("traced-poison");
        String deadLetters = in + "-dlq";
        Path manifest = manifest("poison", in, """
                function: com.example.errors.ThrowingFunction
                jar: throwing.jar
                output: %s-out
                maxAttempts: 3
                deadLetterTopic: %s
                failureBackoff: none
                """.formatted(in, deadLetters));
        try (Deployment deployment = Preflight.check(manifest, Map.of());
                Settle settle = traced(deployment);
                Producer<String> producer = FunctionTopics.unbatched(pulsar.client(), in)) {
            await().atMost(WITHIN).until(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200);

            KeyValue<SpanContext, MessageId> sent = sendInTrace(producer, "invalid");
            await().atMost(WITHIN).until(() -> named("send " + deadLetters).size() == 1);
            await().atMost(WITHIN).until(() -> named("process poison").size() == 3);

            String trace = sent.getKey().getTraceId();
            List<SpanData> attempts = named("process poison").stream()
                    .sorted(Comparator.comparing(span -> span.getAttributes().get(ATTEMPT)))
                    .toList();
            for (int i = 0; i < 3; i++) {
                SpanData attempt = attempts.get(i);
                assertThat(attempt.getAttributes().get(ATTEMPT)).isEqualTo(i + 1L);
                assertThat(attempt.getTraceId()).as("attempt %d's trace", i + 1).isEqualTo(trace);
                assertThat(attempt.getParentSpanId()).isEqualTo(sent.getKey().getSpanId());
                assertThat(attempt.getAttributes().asMap())
                        .containsEntry(AttributeKey.stringKey("settle.outcome"), "error")
                        .containsEntry(AttributeKey.stringKey("settle.failure.stage"), "handler");
                assertThat(attempt.getEvents())
                        .as("attempt %d records the exception", i + 1)
                        .anySatisfy(event -> assertThat(event.getName()).isEqualTo("exception"));
                if (i == 0) {
                    assertThat(attempt.getLinks()).isEmpty();
                } else {
                    String previous = attempts.get(i - 1).getSpanId();
                    assertThat(attempt.getLinks())
                            .as("attempt %d links to attempt %d", i + 1, i)
                            .singleElement()
                            .satisfies(link -> assertThat(link.getSpanContext().getSpanId())
                                    .isEqualTo(previous));
                }
            }
            SpanData letter = only("send " + deadLetters);
            assertThat(letter.getTraceId()).isEqualTo(trace);
            assertThat(letter.getParentSpanId()).isEqualTo(attempts.get(2).getSpanId());
            assertThat(letter.getAttributes().get(AttributeKey.booleanKey("settle.dead_letter")))
                    .isTrue();

            // The letter carries its own span's context (not the producer's it was copied from), so a replay,
            // which copies the letter's properties, goes on in this trace.
            try (Consumer<?> reader = pulsar.client()
                    .newConsumer(Schema.AUTO_CONSUME())
                    .topic(deadLetters)
                    .subscriptionName("check")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .subscribe()) {
                Message<?> dead = reader.receive(30, TimeUnit.SECONDS);
                assertThat(dead).as("the dead letter within 30 s").isNotNull();
                SpanContext carried = carried(dead.getProperties());
                assertThat(carried.getTraceId()).isEqualTo(trace);
                assertThat(carried.getSpanId()).isEqualTo(letter.getSpanId());
            }
        }
    }

    /** Sends {@code value} in a new trace's producer span, as an instrumented upstream service does. */
    private KeyValue<SpanContext, MessageId> sendInTrace(Producer<String> producer, String value) throws Exception {
        Span span = upstream.spanBuilder("send upstream")
                .setSpanKind(SpanKind.PRODUCER)
                .startSpan();
        try {
            Map<String, String> properties = new HashMap<>();
            openTelemetry
                    .getPropagators()
                    .getTextMapPropagator()
                    .inject(Context.root().with(span), properties, (carrier, key, v) -> carrier.put(key, v));
            assertThat(properties).containsKey("traceparent");
            MessageId id =
                    producer.newMessage().value(value).properties(properties).send();
            return new KeyValue<>(span.getSpanContext(), id);
        } finally {
            span.end();
        }
    }

    private static SpanContext carried(Map<String, String> properties) {
        assertThat(properties).containsKey("traceparent");
        return Span.fromContext(W3CTraceContextPropagator.getInstance().extract(Context.root(), properties, PROPERTIES))
                .getSpanContext();
    }

    private List<SpanData> named(String name) {
        return exported.getFinishedSpanItems().stream()
                .filter(span -> span.getName().equals(name))
                .toList();
    }

    private SpanData only(String name) {
        List<SpanData> found = named(name);
        assertThat(found).as("spans named '%s'", name).hasSize(1);
        return found.get(0);
    }

    private Path manifest(String name, String topic, String code) throws Exception {
        return pulsar.manifest(folder.resolve(name + ".yaml"), """
                tracing: true
                subscriptions:
                  - name: %s
                    topics: [%s]
                %s
                """.formatted(
                        name, topic, code.indent(4).stripTrailing()));
    }

    /** Starts {@code deployment} with its spans going to {@link #exported}. */
    private Settle traced(Deployment deployment) throws Exception {
        return Settle.start(deployment, Duration.ofSeconds(5), () -> OpenTelemetryTracing.of(openTelemetry));
    }
}
