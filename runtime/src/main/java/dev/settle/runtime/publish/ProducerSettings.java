package dev.settle.runtime.publish;

import java.time.Duration;
import java.util.Objects;
import org.apache.pulsar.client.api.CompressionType;

/**
 * How {@link PulsarOutputs} builds its producers: the subscription's {@code output:} settings, whose defaults are a
 * Pulsar Functions output producer's.
 *
 * @param batching whether the producers batch
 * @param batchingMaxDelay how long a batch waits for more messages
 * @param compression how they compress
 * @param maxPendingMessages the producer's queue; 0 for the client's default (bounded by its memory limit)
 */
public record ProducerSettings(
        boolean batching, Duration batchingMaxDelay, CompressionType compression, int maxPendingMessages) {
    /** A Functions output producer's: batching on, 10 ms, LZ4. */
    public static final ProducerSettings FUNCTIONS_DEFAULT =
            new ProducerSettings(true, Duration.ofMillis(10), CompressionType.LZ4, 0);

    public ProducerSettings {
        Objects.requireNonNull(batchingMaxDelay, "batchingMaxDelay");
        Objects.requireNonNull(compression, "compression");
    }
}
