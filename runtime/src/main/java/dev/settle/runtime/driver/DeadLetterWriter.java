package dev.settle.runtime.driver;

import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Where Settle writes a dead letter it has a cause for (docs/dead-letters.md): the real dead-letter producer, or the
 * test kit's simulated topic. The settlement acknowledges the original only once the returned stage completes, and
 * negatively acknowledges it when the stage fails, so a dead letter that was not stored never loses its message.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
public interface DeadLetterWriter<M> {
    /**
     * Publishes a copy of {@code work}'s message (payload, key, ordering key, event time and properties, as the Pulsar
     * client copies them) with the properties of {@link DeadLetterProperties#letter}: the client's {@code
     * REAL_TOPIC}, {@code REAL_SUBSCRIPTION} and {@code ORIGIN_MESSAGE_ID} and {@code settleProperties}, set by Settle
     * over whatever the message carried. The one place a letter is written: a delivery settled in a transaction
     * writes its letter in that transaction through here.
     *
     * @return completes once the broker has stored the dead letter; exceptionally when it has not
     */
    CompletionStage<?> write(UnitOfWork<M> work, Map<String, String> settleProperties);

    /**
     * Whether {@link #write} acknowledges the original itself, together with its letter (an exactly-once
     * subscription's, in one transaction): the settlement then has nothing to acknowledge once the letter is stored.
     */
    default boolean acknowledgesOriginal() {
        return false;
    }
}
