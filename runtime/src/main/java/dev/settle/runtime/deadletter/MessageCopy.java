package dev.settle.runtime.deadletter;

import java.util.Map;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A copy of a message as the Pulsar client's dead-letter copy makes one: the payload (the same bytes), the key (as
 * bytes when it was set as bytes), the ordering key and the event time, with the properties its caller chose
 * ({@link DeadLetterProperties#letter} or {@link DeadLetterProperties#replayed}). Settle's dead letters, the replay's
 * copies and its parked letters are all made here, so a message keeps them on its way out and back.
 */
public final class MessageCopy {
    private MessageCopy() {}

    /** {@code to} as a copy of {@code from}: its payload, key, ordering key and event time, and {@code properties}. */
    public static TypedMessageBuilder<byte[]> of(
            Message<?> from, TypedMessageBuilder<byte[]> to, Map<String, String> properties) {
        return keyAndTimes(from, to.value(from.getData()).properties(properties));
    }

    /** Sets {@code from}'s key, ordering key and event time, those it has, on {@code copy}; returns {@code copy}. */
    private static <T> TypedMessageBuilder<T> keyAndTimes(Message<?> from, TypedMessageBuilder<T> copy) {
        if (from.hasBase64EncodedKey()) {
            copy.keyBytes(from.getKeyBytes());
        } else if (from.hasKey()) {
            copy.key(from.getKey());
        }
        if (from.hasOrderingKey()) {
            copy.orderingKey(from.getOrderingKey());
        }
        // 0 is the client's "not set".
        if (from.getEventTime() > 0) {
            copy.eventTime(from.getEventTime());
        }
        return copy;
    }
}
