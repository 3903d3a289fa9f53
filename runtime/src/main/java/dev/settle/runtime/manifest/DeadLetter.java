package dev.settle.runtime.manifest;

import java.util.Objects;
import java.util.Optional;

/**
 * A subscription's dead-letter cap: the cap and the topic come together or not at all, so one without the other
 * cannot be built.
 *
 * @param maxAttempts deliveries before a failing message is dead-lettered, at least 2 (the client needs
 *     {@code maxRedeliverCount = maxAttempts - 1} above 0)
 * @param topic where capped messages go, fully qualified and persistent
 * @param initialSubscription the dead-letter topic's initial subscription, created with the topic so dead letters
 *     are retained before anyone subscribes; empty for none ({@code deadLetterSubscription: none})
 * @param stackTrace whether the dead letters Settle writes carry the failure's stack trace (capped), as they do
 *     unless the manifest says {@code deadLetterStackTrace: false}
 * @param hold {@code onCap: hold}: where a capped message is held for a fix instead; empty for {@code onCap:
 *     deadLetter}, the default
 */
public record DeadLetter(
        int maxAttempts,
        String topic,
        Optional<String> initialSubscription,
        boolean stackTrace,
        Optional<HoldForFix> hold) {
    /** A cap whose dead letters carry the stack trace. */
    public DeadLetter(int maxAttempts, String topic, Optional<String> initialSubscription) {
        this(maxAttempts, topic, initialSubscription, true);
    }

    /** A cap whose capped messages go to the dead-letter topic ({@code onCap: deadLetter}). */
    public DeadLetter(int maxAttempts, String topic, Optional<String> initialSubscription, boolean stackTrace) {
        this(maxAttempts, topic, initialSubscription, stackTrace, Optional.empty());
    }

    /** This cap with its capped messages held for a fix in {@code held} ({@code onCap: hold}). */
    public DeadLetter holding(HoldForFix held) {
        return new DeadLetter(maxAttempts, topic, initialSubscription, stackTrace, Optional.of(held));
    }

    public DeadLetter {
        if (maxAttempts < 2) {
            throw new IllegalArgumentException("maxAttempts below 2: " + maxAttempts);
        }
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(initialSubscription, "initialSubscription");
        Objects.requireNonNull(hold, "hold");
    }

    /** The initial subscription a dead-letter topic gets unless the manifest names one: {@code <subscription>-dlq}. */
    public static String defaultSubscription(String subscription) {
        return subscription + "-dlq";
    }

    /** The Pulsar client's {@code maxRedeliverCount}: the client delivers while the count is below it. */
    public int maxRedeliverCount() {
        return maxAttempts - 1;
    }

    /** Whether a delivery with this {@code attempt} (redelivery count + 1) is the last before the dead letters. */
    public boolean isLastAttempt(int attempt) {
        return attempt >= maxAttempts;
    }
}
