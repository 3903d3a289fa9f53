package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;

/**
 * A subscription's {@code durableDelays: true} (docs/concepts.md, "Durable delays"): a {@code retryAfter}, or a failure
 * backoff, of at least {@link #after} is not held in the process but kept on {@link #topic}: a copy of the message is
 * published there with its delay and the original acknowledged with it, so a crash neither loses the wait nor ends it
 * early. Off unless the manifest turns it on: the settlement contract (docs/design.md section 1) stays the default.
 *
 * @param topic {@code <subscription>-delay} in the first consumed topic's namespace, fully qualified
 * @param after the shortest delay kept on the topic; shorter ones stay in memory
 */
public record DurableDelays(String topic, Duration after) {
    /** {@code durableAfter}: a wait shorter than this loses little to a crash and costs no publish. */
    public static final Duration DEFAULT_AFTER = Duration.ofSeconds(5);

    public DurableDelays {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(after, "after");
        if (after.isNegative() || after.isZero()) {
            throw new IllegalArgumentException("durableAfter must be positive, was " + after);
        }
    }

    /**
     * The delay topic of {@code subscription} whose first consumed topic is {@code firstTopic}: {@code
     * <subscription>-delay} in its namespace, persistent (a delay kept in memory on the broker would be no better than
     * one kept in the runtime).
     */
    public static String topicFor(String firstTopic, String subscription) {
        String full = Topics.fullName(firstTopic);
        String[] parts = full.substring(full.indexOf("://") + 3).split("/", -1);
        return "persistent://" + parts[0] + "/" + parts[1] + "/" + subscription + "-delay";
    }

    /** Whether a wait of {@code delay} is kept on the topic. */
    public boolean keeps(Duration delay) {
        return delay.compareTo(after) >= 0;
    }
}
