package dev.settle.test;

import java.time.Duration;

/**
 * A call the runtime made on the (simulated) Pulsar consumer, or what the client did on its own for it.
 *
 * @param subscription the subscription
 * @param messageId the message
 * @param attempt the attempt of the copy the call was about
 * @param kind what was called
 * @param at when, on the test's clock, since the driver was created
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API").
 */
public record ConsumerCall(String subscription, String messageId, int attempt, Kind kind, Duration at) {
    /** What the consumer was asked to do. */
    public enum Kind {
        /** {@code consumer.acknowledge(message)}: ack and drop. */
        ACKNOWLEDGE,
        /** {@code consumer.negativeAcknowledge(message)}: retry, a released retryAfter or failure backoff. */
        NEGATIVE_ACKNOWLEDGE,
        /** The client's ack timeout passed with the copy neither acknowledged nor negatively acknowledged. */
        ACK_TIMEOUT,
        /**
         * The message was produced to the dead-letter topic: by the client after an ack timeout (which acknowledges
         * the original), or by Settle for a failed last attempt (its acknowledgement follows as a call of its own).
         */
        DEAD_LETTERED
    }
}
