package dev.settle.runtime.driver;

import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Where a wait kept durably ({@code durableDelays: true}) is written: the subscription's delay topic through a {@link
 * dev.settle.runtime.deadletter.DeadLetterProducer}, or the test kit's simulated one. {@link DelayCopies} settles the
 * original only once the returned stage completes, and holds it in the process as before when the stage fails, so a
 * copy that was not stored never loses its message nor its wait.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
public interface DelayWriter<M> {
    /**
     * Publishes a copy of {@code work}'s message with exactly {@code properties}, to be delivered at {@code
     * deliverAtMillis} (wall clock), in {@code work}'s transaction when it has one (at exactly-once, a transaction of
     * its own committed with the original's acknowledgement).
     *
     * @return completes once the broker has stored the copy; exceptionally when it has not
     */
    CompletionStage<?> write(UnitOfWork<M> work, Map<String, String> properties, long deliverAtMillis);
}
