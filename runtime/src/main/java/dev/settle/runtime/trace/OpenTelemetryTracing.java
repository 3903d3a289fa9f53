package dev.settle.runtime.trace;

import dev.settle.runtime.driver.Tracing;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;

/**
 * {@link Tracing} on OpenTelemetry: one span per handling, one per output and per dead letter below it. Span names
 * and the {@code messaging.*} attributes follow OpenTelemetry's messaging conventions; Settle's own are
 * {@code settle.*}. Thread-safe.
 */
public final class OpenTelemetryTracing implements Tracing {
    static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
    static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("settle.outcome");
    static final AttributeKey<String> FAILURE_STAGE = AttributeKey.stringKey("settle.failure.stage");
    static final AttributeKey<String> CODE = AttributeKey.stringKey("settle.code");
    private static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
    private static final AttributeKey<String> OPERATION = AttributeKey.stringKey("messaging.operation.name");
    private static final AttributeKey<String> DESTINATION = AttributeKey.stringKey("messaging.destination.name");
    private static final AttributeKey<String> SUBSCRIPTION =
            AttributeKey.stringKey("messaging.destination.subscription.name");
    private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("settle.attempt");
    private static final AttributeKey<Boolean> DEAD_LETTER = AttributeKey.booleanKey("settle.dead_letter");
    static final AttributeKey<Long> BATCH_SIZE = AttributeKey.longKey("messaging.batch.message_count");
    /** Previous attempts remembered for links: a few seconds of a backlog failing at full speed. */
    static final int ATTEMPTS_REMEMBERED = 10_000;

    /**
     * Settle's defaults under the {@code OTEL_*} variables and {@code otel.*} system properties, which override
     * them: traces only (the metrics stay Prometheus'), named {@code settle}, over OTLP/HTTP, the one protocol the
     * JDK's HTTP client sends (there is no gRPC sender on the class path).
     */
    private static final Map<String, String> DEFAULTS = Map.of(
            "otel.service.name", "settle",
            "otel.metrics.exporter", "none",
            "otel.logs.exporter", "none",
            "otel.exporter.otlp.protocol", "http/protobuf");

    private final Tracer tracer;
    private final TextMapPropagator propagator;
    private final Runnable shutdown;
    private final PreviousAttempts previous = new PreviousAttempts(ATTEMPTS_REMEMBERED);

    private OpenTelemetryTracing(OpenTelemetry openTelemetry, Runnable shutdown) {
        this.tracer = openTelemetry.getTracer("dev.settle.runtime");
        TextMapPropagator configured = openTelemetry.getPropagators().getTextMapPropagator();
        // With no propagator configured (OTEL_PROPAGATORS=none, or a bare SDK) the W3C one still carries traces on.
        this.propagator = configured.fields().isEmpty() ? W3CTraceContextPropagator.getInstance() : configured;
        this.shutdown = shutdown;
    }

    /**
     * Tracing as the {@code OTEL_*} environment variables (and {@code otel.*} system properties) configure it.
     *
     * @throws TracingRefusedException when the SDK refuses them (an unknown exporter, a protocol with no sender)
     */
    public static Tracing autoconfigured() {
        OpenTelemetrySdk sdk;
        try {
            sdk = AutoConfiguredOpenTelemetrySdk.builder()
                    .addPropertiesSupplier(() -> DEFAULTS)
                    // Settle.close flushes it, after the last settlement: a hook of its own could run before that.
                    .disableShutdownHook()
                    .build()
                    .getOpenTelemetrySdk();
        } catch (ConfigurationException refused) {
            throw new TracingRefusedException(
                    "tracing: the OpenTelemetry SDK refused the OTEL_* settings: " + refused.getMessage()
                            + ". Settle exports traces over OTLP/HTTP: set OTEL_TRACES_EXPORTER to otlp or none and"
                            + " OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf (or leave them unset), or set tracing:"
                            + " false",
                    refused);
        }
        return new OpenTelemetryTracing(sdk, () -> sdk.shutdown().join(10, TimeUnit.SECONDS));
    }

    /** Tracing through {@code openTelemetry}, which stays its caller's to shut down (a test's in-memory exporter). */
    public static Tracing of(OpenTelemetry openTelemetry) {
        return new OpenTelemetryTracing(openTelemetry, () -> {});
    }

    @Override
    public Handling start(String subscription, Message<?> message, int attempt) {
        Context producer = propagator.extract(Context.root(), message.getProperties(), MessageProperties.INSTANCE);
        SpanBuilder builder = tracer.spanBuilder("process " + subscription)
                .setSpanKind(SpanKind.CONSUMER)
                .setAttribute(SYSTEM, "pulsar")
                .setAttribute(OPERATION, "process")
                .setAttribute(DESTINATION, message.getTopicName())
                .setAttribute(SUBSCRIPTION, subscription)
                .setAttribute(MESSAGE_ID, message.getMessageId().toString())
                .setAttribute(ATTEMPT, (long) attempt);
        // The span is made before it is remembered, so the link is added once its own context is known.
        Object id = message.getMessageId();
        if (Span.fromContext(producer).getSpanContext().isValid()) {
            builder.setParent(producer);
        } else {
            builder.setNoParent();
        }
        Span span = builder.startSpan();
        SpanContext before = previous.started(id, span.getSpanContext());
        if (before != null) {
            span.addLink(before, Attributes.of(ATTEMPT, (long) attempt - 1));
        }
        return new HandlingSpan(this, span, id);
    }

    /**
     * The span of one call of a batch handler, a root of its own linked to the span of each of {@code members}: the
     * messages of a batch come from as many traces as they have producers, so the call belongs to none of them.
     */
    Tracing.Call batchCall(String subscription, String code, List<Tracing.Handling> members) {
        SpanBuilder builder = tracer.spanBuilder("process batch " + subscription)
                .setSpanKind(SpanKind.INTERNAL)
                .setNoParent()
                .setAttribute(SYSTEM, "pulsar")
                .setAttribute(OPERATION, "process")
                .setAttribute(SUBSCRIPTION, subscription)
                .setAttribute(BATCH_SIZE, (long) members.size())
                .setAttribute(CODE, code);
        for (Tracing.Handling member : members) {
            if (member instanceof HandlingSpan handling) {
                builder.addLink(handling.span().getSpanContext());
            }
        }
        Span span = builder.startSpan();
        return thrown -> {
            if (thrown != null) {
                span.recordException(thrown);
                span.setStatus(StatusCode.ERROR, "the call threw");
            }
            span.end();
        };
    }

    /** The span of a send below {@code parent}, started now; {@code deadLetter} for a dead letter's. */
    SendSpan send(Span parent, String topic, boolean deadLetter) {
        SpanBuilder builder = tracer.spanBuilder("send " + topic)
                .setSpanKind(SpanKind.PRODUCER)
                .setParent(Context.root().with(parent))
                .setAttribute(SYSTEM, "pulsar")
                .setAttribute(OPERATION, "send")
                .setAttribute(DESTINATION, topic);
        if (deadLetter) {
            builder.setAttribute(DEAD_LETTER, true);
        }
        Span span = builder.startSpan();
        return new SendSpan(span, Map.copyOf(properties(span)));
    }

    /** The message properties that carry {@code span}'s context. */
    Map<String, String> properties(Span span) {
        Map<String, String> carrier = new LinkedHashMap<>();
        propagator.inject(Context.root().with(span), carrier, MessageProperties.INSTANCE);
        return carrier;
    }

    /** {@code message} was acknowledged after the attempt {@code attempt}: no later attempt will link to it. */
    void acknowledged(Object message, SpanContext attempt) {
        previous.done(message, attempt);
    }

    @Override
    public void close() {
        shutdown.run();
    }
}
