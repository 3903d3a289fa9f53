package dev.settle.runtime.driver;

import java.util.Locale;

/**
 * How a delivery was settled: the {@code outcome} label of {@code settle_outcomes_total}.
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API"), as the test kit
 * returns it ({@code TestSubscription.outcomes()}).
 */
public enum Settled {
    /** {@code Outcome.ack()}: acknowledged. */
    ACK,
    /** {@code Outcome.retry()}: negatively acknowledged at once. */
    RETRY,
    /** {@code Outcome.retryAfter(d)}: held for {@code d}, then negatively acknowledged. */
    RETRY_AFTER,
    /** {@code Outcome.drop()}: acknowledged, counted apart. */
    DROP,
    /** {@code null}: left unacknowledged. */
    NONE,
    /** The handler threw, or the payload could not be decoded: negatively acknowledged at once. */
    ERROR,
    /** {@code retryAfter(d)} with {@code d} not shorter than the ack timeout: negatively acknowledged at once. */
    REFUSED;

    /** The metric label, such as {@code retry_after}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
