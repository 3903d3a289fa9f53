package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;

/**
 * How an exactly-once subscription groups its deliveries into transactions (docs/exactly-once.md, "Commit
 * batching"): the manifest's {@code commitBatch}. A transaction takes the deliveries that begin while it is open, up
 * to {@code maxDeliveries}, for at most {@code maxDelay}; it commits once each of them has been settled, so their
 * outputs and acknowledgements become visible together. One failed delivery that had sent an output aborts the whole
 * transaction, and every delivery in it comes back.
 *
 * @param maxDeliveries deliveries in one transaction, at least 1; 1 is one transaction per delivery
 * @param maxDelay how long a transaction takes new deliveries after its first; zero with {@code maxDeliveries} 1
 */
public record CommitBatch(int maxDeliveries, Duration maxDelay) {
    /** {@code commitBatch.maxDeliveries}: enough that a transaction's own cost is spread thin at broker speed. */
    public static final int DEFAULT_MAX_DELIVERIES = 100;
    /** {@code commitBatch.maxDelay}: a few milliseconds, what a lone message waits for its commit at most. */
    public static final Duration DEFAULT_MAX_DELAY = Duration.ofMillis(10);
    /** The largest {@code maxDeliveries} accepted: a transaction's acknowledgements are sent in one request. */
    public static final int MAX_DELIVERIES = 10_000;
    /** The longest {@code maxDelay} accepted: a transaction held open longer only adds latency. */
    public static final Duration MAX_DELAY = Duration.ofSeconds(1);

    /** Every setting at its default. */
    public static final CommitBatch DEFAULT = new CommitBatch(DEFAULT_MAX_DELIVERIES, DEFAULT_MAX_DELAY);
    /** One transaction per delivery. */
    public static final CommitBatch ONE_PER_DELIVERY = new CommitBatch(1, Duration.ZERO);

    public CommitBatch {
        Objects.requireNonNull(maxDelay, "maxDelay");
        if (maxDeliveries < 1 || maxDeliveries > MAX_DELIVERIES) {
            throw new IllegalArgumentException("maxDeliveries outside 1.." + MAX_DELIVERIES + ": " + maxDeliveries);
        }
        if (maxDelay.isNegative() || maxDelay.compareTo(MAX_DELAY) > 0) {
            throw new IllegalArgumentException("maxDelay outside 0.." + MAX_DELAY + ": " + maxDelay);
        }
    }

    /** Whether a transaction takes more than one delivery. */
    public boolean batches() {
        return maxDeliveries > 1;
    }
}
