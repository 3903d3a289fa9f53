package dev.settle.runtime.trace;

import dev.settle.runtime.driver.Failure;
import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.driver.Tracing;
import dev.settle.runtime.publish.SendTrace;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import java.util.List;
import java.util.Map;

/** The span of one handling, from before the port is called until the delivery is settled. Thread-safe. */
final class HandlingSpan implements Tracing.Handling {
    private final OpenTelemetryTracing tracing;
    private final Span span;
    private final Object messageId;

    HandlingSpan(OpenTelemetryTracing tracing, Span span, Object messageId) {
        this.tracing = tracing;
        this.span = span;
        this.messageId = messageId;
    }

    @Override
    public Map<String, String> context() {
        return Map.copyOf(tracing.properties(span));
    }

    @Override
    public SendTrace.Sending send(String topic) {
        return tracing.send(span, topic, false);
    }

    @Override
    public SendTrace.Sending deadLetter(String topic) {
        return tracing.send(span, topic, true);
    }

    @Override
    public Tracing.Call batchCall(String subscription, String code, List<Tracing.Handling> members) {
        return tracing.batchCall(subscription, code, members);
    }

    /** This handling's span, which a batch call's span links to. */
    Span span() {
        return span;
    }

    @Override
    public void end(Settled how, Failure failure, String code) {
        span.setAttribute(OpenTelemetryTracing.OUTCOME, how.label());
        span.setAttribute(OpenTelemetryTracing.CODE, code);
        if (failure != null) {
            span.setAttribute(
                    OpenTelemetryTracing.FAILURE_STAGE, failure.stage().label());
            if (failure.cause() != null) {
                span.recordException(failure.printableCause());
                span.setStatus(StatusCode.ERROR, failure.stage().label());
            }
        }
        if (how == Settled.ACK || how == Settled.DROP) {
            tracing.acknowledged(messageId, span.getSpanContext());
        }
        span.end();
    }
}
