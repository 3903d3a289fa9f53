package dev.settle.runtime.publish;

import java.util.Map;
import org.apache.pulsar.client.api.MessageId;

/**
 * The trace a delivery's sends go into (docs/observability.md, "Traces"): implemented by the tracing package, so this
 * package touches no OpenTelemetry type. Absent (null) when tracing is off.
 */
public interface SendTrace {
    /** A send to {@code topic} is being made now: the span of that send, a child of the delivery's. */
    Sending send(String topic);

    /** The span of one send. */
    interface Sending {
        /** The message properties that carry this span's context: {@code traceparent}, and {@code tracestate}. */
        Map<String, String> properties();

        /** The send is over: stored as {@code id} (may be null when unknown), or failed with {@code error}. */
        void sent(MessageId id, Throwable error);
    }
}
