package dev.settle.runtime.driver;

import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Where Settle writes a dead letter it has a cause for (docs/dead-letters.md): the subscription's {@link
 * dev.settle.runtime.deadletter.DeadLetterProducer}, or the test kit's simulated topic. {@link DeadLettering} settles
 * the original only once the returned stage completes, and negatively acknowledges it when the stage fails, so a dead
 * letter that was not stored never loses its message.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
public interface DeadLetterWriter<M> {
    /**
     * Publishes a copy of {@code work}'s message with the properties of {@link
     * dev.settle.runtime.deadletter.DeadLetterProperties#letter} and {@code settleProperties}, in {@code work}'s
     * transaction when it has one (an exactly-once letter's own, committed with its original's acknowledgement).
     *
     * @return completes once the broker has stored the dead letter; exceptionally when it has not
     */
    CompletionStage<?> write(UnitOfWork<M> work, Map<String, String> settleProperties);
}
