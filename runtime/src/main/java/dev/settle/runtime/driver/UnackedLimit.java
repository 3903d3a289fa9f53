package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SubscriptionKind;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says plainly when a subscription's held messages reach the broker's per-consumer unacked limit. A message held for
 * {@code retryAfter} or a failure backoff stays unacknowledged, and so does one held behind an earlier message of its
 * key ({@code order: key}), and on a Shared or Key_Shared subscription the broker
 * stops dispatching to a consumer with {@code maxUnackedMessagesPerConsumer} unacknowledged messages (50 000 by
 * default) until fewer than half remain: the subscription then looks stalled while the process is healthy. The
 * client is not told; this says it once, in one log line and {@code settle_unacked_limit_reached}, each time the
 * held count reaches the limit, and again when it falls below half.
 *
 * <p>The broker's own setting is not visible to the client, so this watches the default. Thread-safe.
 */
final class UnackedLimit {
    private static final Logger log = LoggerFactory.getLogger(UnackedLimit.class);
    /** The broker's default {@code maxUnackedMessagesPerConsumer}. */
    static final int BROKER_DEFAULT = 50_000;

    private final String subscription;
    private final DriverMetrics metrics;
    private final int limit;
    /** Guarded by this. */
    private boolean reached;
    /** Held for retryAfter or a failure backoff. Guarded by this. */
    private int retries;
    /** Held behind an earlier message of their key. Guarded by this. */
    private int behindKey;

    private UnackedLimit(String subscription, DriverMetrics metrics, int limit) {
        this.subscription = subscription;
        this.metrics = metrics;
        this.limit = limit;
    }

    /** The watch for a subscription of {@code kind}: none where the broker keeps no per-consumer limit. */
    static UnackedLimit of(String subscription, SubscriptionKind kind, DriverMetrics metrics) {
        boolean limited = kind == SubscriptionKind.SHARED || kind == SubscriptionKind.KEY_SHARED;
        return new UnackedLimit(subscription, metrics, limited ? BROKER_DEFAULT : Integer.MAX_VALUE);
    }

    /** The subscription now holds {@code held} messages for retryAfter or a failure backoff. */
    synchronized void held(int held) {
        retries = held;
        check(retries + behindKey);
    }

    /** Messages held behind an earlier message of their key changed by {@code delta}. */
    synchronized void heldBehindKeyChanged(int delta) {
        behindKey += delta;
        check(retries + behindKey);
    }

    private void check(int held) {
        if (!reached && held >= limit) {
            reached = true;
            metrics.unackedLimitReached(true);
            log.warn(
                    "subscription '{}': {} messages are held for retryAfter, a failure backoff or behind their key,"
                            + " unacknowledged:"
                            + " that is the broker's default maxUnackedMessagesPerConsumer ({}), so it stops"
                            + " dispatching to this consumer until fewer than {} are left unacknowledged. Shorten the"
                            + " delays, return retryAfter less often, or raise the limit on the broker or namespace;"
                            + " settle_unacked_limit_reached stays 1 until then",
                    subscription,
                    held,
                    limit,
                    limit / 2);
        } else if (reached && held < limit / 2) {
            reached = false;
            metrics.unackedLimitReached(false);
            log.info(
                    "subscription '{}': {} messages held, below half the broker's unacked limit: it dispatches"
                            + " again",
                    subscription,
                    held);
        }
    }
}
