package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;

/**
 * How long a failed message (the handler threw, or its payload could not be decoded) is held before it is
 * redelivered: {@code initial} after the first attempt, then {@code multiplier} times longer after each, never
 * longer than {@code max}. It keeps a failing downstream from spinning the CPU or dead-lettering a backlog in
 * milliseconds, which a retry at once does.
 *
 * @param initial the wait after the first failed attempt, positive
 * @param multiplier how much longer each next wait is, at least 1
 * @param max the longest wait, at least {@code initial}
 */
public record FailureBackoff(Duration initial, double multiplier, Duration max) {
    /** 100ms, doubled after each attempt, up to 30s. */
    public static final FailureBackoff DEFAULT = new FailureBackoff(Duration.ofMillis(100), 2, Duration.ofSeconds(30));

    public FailureBackoff {
        Objects.requireNonNull(initial, "initial");
        Objects.requireNonNull(max, "max");
        if (initial.isNegative() || initial.isZero()) {
            throw new IllegalArgumentException("initial must be positive: " + initial);
        }
        if (!(multiplier >= 1) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("multiplier below 1: " + multiplier);
        }
        if (max.compareTo(initial) < 0) {
            throw new IllegalArgumentException("max below initial: " + max);
        }
    }

    /** The wait after failed attempt {@code attempt} (1 for the first delivery). */
    public Duration delayAfter(int attempt) {
        // In doubles, so a long run of attempts saturates at max instead of overflowing.
        double millis = initial.toMillis() * Math.pow(multiplier, Math.max(0, attempt - 1));
        return millis >= max.toMillis() ? max : Duration.ofMillis(Math.round(millis));
    }
}
