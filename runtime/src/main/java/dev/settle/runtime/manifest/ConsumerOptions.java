package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The settings that shape the Pulsar consumer itself; changing any of them means a new consumer.
 *
 * @param ackTimeout the consumer's ack timeout, at least {@link #MIN_ACK_TIMEOUT}; empty for none
 * @param receiverQueueSize messages the client prefetches, at least 1
 * @param initialPosition where a new subscription starts
 * @param batchIndexAck whether the broker has {@code acknowledgmentAtBatchIndexLevelEnabled}
 */
public record ConsumerOptions(
        Optional<Duration> ackTimeout, int receiverQueueSize, InitialPosition initialPosition, boolean batchIndexAck) {
    /** The Pulsar client's floor for an ack timeout. */
    public static final Duration MIN_ACK_TIMEOUT = Duration.ofSeconds(1);

    /**
     * No ack timeout; the client's own receiver queue (1000); earliest, so messages published before a new
     * subscription's first start are handled, not skipped (Pulsar's own default is latest); no batch-index
     * acknowledgement, as on a broker with its default settings.
     */
    public static final ConsumerOptions DEFAULT =
            new ConsumerOptions(Optional.empty(), 1000, InitialPosition.EARLIEST, false);

    public ConsumerOptions {
        Objects.requireNonNull(ackTimeout, "ackTimeout");
        Objects.requireNonNull(initialPosition, "initialPosition");
        ackTimeout.ifPresent(timeout -> {
            if (timeout.compareTo(MIN_ACK_TIMEOUT) < 0) {
                throw new IllegalArgumentException("ackTimeout below the client's floor of 1s: " + timeout);
            }
        });
        if (receiverQueueSize < 1) {
            throw new IllegalArgumentException("receiverQueueSize below 1: " + receiverQueueSize);
        }
    }

    public ConsumerOptions withAckTimeout(Optional<Duration> timeout) {
        return new ConsumerOptions(timeout, receiverQueueSize, initialPosition, batchIndexAck);
    }

    public ConsumerOptions withReceiverQueueSize(int size) {
        return new ConsumerOptions(ackTimeout, size, initialPosition, batchIndexAck);
    }

    public ConsumerOptions withInitialPosition(InitialPosition position) {
        return new ConsumerOptions(ackTimeout, receiverQueueSize, position, batchIndexAck);
    }

    public ConsumerOptions withBatchIndexAck(boolean enabled) {
        return new ConsumerOptions(ackTimeout, receiverQueueSize, initialPosition, enabled);
    }
}
