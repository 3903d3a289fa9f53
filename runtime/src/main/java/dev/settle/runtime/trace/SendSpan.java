package dev.settle.runtime.trace;

import dev.settle.runtime.publish.SendTrace;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import java.util.Map;
import org.apache.pulsar.client.api.MessageId;

/** The span of one send (an output, or a dead letter): ends when the broker has stored the message, or refused it. */
final class SendSpan implements SendTrace.Sending {
    private final Span span;
    private final Map<String, String> properties;

    SendSpan(Span span, Map<String, String> properties) {
        this.span = span;
        this.properties = properties;
    }

    @Override
    public Map<String, String> properties() {
        return properties;
    }

    @Override
    public void sent(MessageId id, Throwable error) {
        if (id != null) {
            span.setAttribute(OpenTelemetryTracing.MESSAGE_ID, id.toString());
        }
        if (error != null) {
            span.recordException(error);
            span.setStatus(StatusCode.ERROR, "not stored");
        }
        span.end();
    }
}
