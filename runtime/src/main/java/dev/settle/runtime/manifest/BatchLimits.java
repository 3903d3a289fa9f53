package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;

/**
 * How a batch handler's deliveries are gathered into one call (docs/handlers.md, "Batch handlers"): the manifest's
 * {@code batch}. A batch is called once it holds {@code maxMessages}, once the next message would take it past
 * {@code maxBytes}, or {@code maxWait} after its first message, whichever comes first; a message larger than
 * {@code maxBytes} goes alone.
 *
 * @param maxMessages messages in one call at most, 1 to {@link #MAX_MESSAGES}
 * @param maxBytes payload bytes in one call at most (a single larger message goes alone), at least 1
 * @param maxWait how long a batch waits for more messages after its first; zero calls with what is there
 */
public record BatchLimits(int maxMessages, long maxBytes, Duration maxWait) {
    /** {@code batch.maxMessages}: the size of a bulk request most stores take well. */
    public static final int DEFAULT_MAX_MESSAGES = 100;
    /** {@code batch.maxBytes}: 1 MiB, below the request limits of common bulk APIs. */
    public static final long DEFAULT_MAX_BYTES = 1024L * 1024;
    /** {@code batch.maxWait}: what a lone message waits for company at most. */
    public static final Duration DEFAULT_MAX_WAIT = Duration.ofMillis(20);
    /** The largest {@code maxMessages} accepted: every message of a batch holds a permit and a place in memory. */
    public static final int MAX_MESSAGES = 10_000;
    /** The longest {@code maxWait} accepted: a batch held open longer only adds latency. */
    public static final Duration MAX_WAIT = Duration.ofSeconds(10);

    /** Every setting at its default: what a batch handler gets without a {@code batch:} section. */
    public static final BatchLimits DEFAULT =
            new BatchLimits(DEFAULT_MAX_MESSAGES, DEFAULT_MAX_BYTES, DEFAULT_MAX_WAIT);

    public BatchLimits {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxMessages < 1 || maxMessages > MAX_MESSAGES) {
            throw new IllegalArgumentException("maxMessages outside 1.." + MAX_MESSAGES + ": " + maxMessages);
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes below 1: " + maxBytes);
        }
        if (maxWait.isNegative() || maxWait.compareTo(MAX_WAIT) > 0) {
            throw new IllegalArgumentException("maxWait outside 0.." + MAX_WAIT + ": " + maxWait);
        }
    }
}
