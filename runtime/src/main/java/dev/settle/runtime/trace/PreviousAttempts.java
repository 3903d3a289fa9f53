package dev.settle.runtime.trace;

import io.opentelemetry.api.trace.SpanContext;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The span of each message's latest attempt, so the next attempt's span links to it. Kept in memory: the broker
 * redelivers a message with the properties it was published with, so nothing written on the message could carry it,
 * and Settle retries by negative acknowledgement, never by republishing. A redelivery to another process (or after a
 * restart) therefore has no link, though it stays in the producer's trace. Bounded: a message that fails once and is
 * then handled elsewhere leaves its entry until it is pushed out. Thread-safe.
 */
final class PreviousAttempts {
    private final Map<Object, SpanContext> latest;

    PreviousAttempts(int remembered) {
        this.latest = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Object, SpanContext> eldest) {
                return size() > remembered;
            }
        };
    }

    /**
     * Remembers {@code attempt} as the latest of {@code message} and returns the one before, or null. Remembered when
     * the attempt starts, not when it ends: a retried message can be back before its span has ended.
     */
    synchronized SpanContext started(Object message, SpanContext attempt) {
        return latest.put(message, attempt);
    }

    /** The message was acknowledged after {@code attempt}: it will not come back. */
    synchronized void done(Object message, SpanContext attempt) {
        latest.remove(message, attempt);
    }
}
