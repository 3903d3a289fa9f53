package dev.settle.runtime.driver;

import dev.settle.runtime.publish.SendTrace;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.api.Message;

/**
 * Traces each handling (docs/observability.md, "Traces"): the driver's port to OpenTelemetry, implemented by the
 * tracing package so the driver imports none of it. It runs as the pipeline's journal part ({@link TracingJournal});
 * a subscription without tracing has the journal's no-op there, and nothing of tracing runs per message.
 * Thread-safe.
 */
public interface Tracing extends AutoCloseable {
    /**
     * Starts the span of one handling of {@code message}: a child of the context its properties carry
     * ({@code traceparent}, {@code tracestate}), linked to the span of the message's previous attempt when that was
     * handled here.
     *
     * @param attempt the redelivery count + 1
     */
    Handling start(String subscription, Message<?> message, int attempt);

    /** Exports what is left and stops: the runtime is closing. */
    @Override
    void close();

    /** The span of one handling; the spans of its outputs and of its dead letter are its children. */
    interface Handling extends SendTrace {
        /** This span's W3C trace context, as message properties carry it ({@code traceparent}, {@code tracestate}). */
        Map<String, String> context();

        /** The dead letter of this delivery is being written to {@code topic}: its span, whose context it carries. */
        Sending deadLetter(String topic);

        /**
         * The handling is settled: {@code how}, having failed with {@code failure} (null when it did not), run by
         * {@code code} (the handler or function and its generation).
         */
        void end(Settled how, Failure failure, String code);

        /**
         * Starts the span of one call of a batch handler, {@code code}, for {@code subscription}: linked to the span of
         * each delivery of the call, {@code members} (this one among them), as OpenTelemetry's messaging conventions
         * link a batch's processing to its messages. A bisection's calls get a span each. Untraced: nothing.
         */
        default Call batchCall(String subscription, String code, List<Handling> members) {
            return Call.NONE;
        }
    }

    /** The span of one call of a batch handler, ended when the call returns or throws. */
    interface Call {
        /** No span. */
        Call NONE = thrown -> {};

        /** The call returned ({@code thrown} null) or threw {@code thrown}. */
        void end(Throwable thrown);
    }
}
