package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * What a copy of a message keeps besides its payload and properties, as the Pulsar client's dead-letter copy keeps it:
 * the key (as bytes when it was set as bytes), the ordering key and the event time. Settle's dead letters and
 * {@code settle dlq replay}'s copies are both made here, so a message keeps them on its way out and back.
 */
public final class MessageCopy {
    private MessageCopy() {}

    /** Sets {@code from}'s key, ordering key and event time, those it has, on {@code copy}; returns {@code copy}. */
    public static <T> TypedMessageBuilder<T> keyAndTimes(Message<?> from, TypedMessageBuilder<T> copy) {
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
