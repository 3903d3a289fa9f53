package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * How a subscription's outputs are sent (docs/functions.md, "Outputs are pipelined"): the return values of a
 * function, its {@code context.publish} calls and a handler's publishers. The producer settings default to what a
 * Pulsar Functions output producer uses.
 *
 * @param maxPendingOutputs sends not yet durable at once, at least 1: at the bound the subscription receives no
 *     more messages until some are stored (as Pulsar Functions' {@code maxPendingAsyncRequests})
 * @param batching whether the producers batch
 * @param batchingMaxDelay how long a batch waits for more messages before it is sent
 * @param compression how the producers compress
 * @param maxPendingMessages the producers' queue, 0 for the client's default (bounded by its memory limit)
 */
public record OutputOptions(
        int maxPendingOutputs,
        boolean batching,
        Duration batchingMaxDelay,
        Compression compression,
        int maxPendingMessages) {
    /** {@code maxPendingOutputs}: Pulsar Functions' {@code maxPendingAsyncRequests} default. */
    public static final int DEFAULT_MAX_PENDING_OUTPUTS = 1000;
    /** {@code output.batchingMaxDelay}: a Functions output producer's. */
    public static final Duration DEFAULT_BATCHING_MAX_DELAY = Duration.ofMillis(10);

    /** Every setting at its default. */
    public static final OutputOptions DEFAULT =
            new OutputOptions(DEFAULT_MAX_PENDING_OUTPUTS, true, DEFAULT_BATCHING_MAX_DELAY, Compression.LZ4, 0);

    /** The producers' compression, as Pulsar names it; Functions' output producers use LZ4. */
    public enum Compression {
        NONE,
        LZ4,
        ZLIB,
        ZSTD,
        SNAPPY;

        /** As written in the manifest. */
        public String manifestName() {
            return name().toLowerCase(Locale.ROOT);
        }

        static List<String> manifestNames() {
            return Arrays.stream(values()).map(Compression::manifestName).toList();
        }

        static Optional<Compression> fromManifestName(String name) {
            return Arrays.stream(values())
                    .filter(c -> c.manifestName().equals(name))
                    .findFirst();
        }
    }

    public OutputOptions {
        Objects.requireNonNull(batchingMaxDelay, "batchingMaxDelay");
        Objects.requireNonNull(compression, "compression");
        if (maxPendingOutputs < 1) {
            throw new IllegalArgumentException("maxPendingOutputs below 1: " + maxPendingOutputs);
        }
        if (maxPendingMessages < 0) {
            throw new IllegalArgumentException("maxPendingMessages below 0: " + maxPendingMessages);
        }
    }

    /** These settings with {@code maxPendingOutputs} instead. */
    public OutputOptions withMaxPendingOutputs(int value) {
        return new OutputOptions(value, batching, batchingMaxDelay, compression, maxPendingMessages);
    }
}
