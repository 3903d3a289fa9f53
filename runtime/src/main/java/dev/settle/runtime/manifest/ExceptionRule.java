package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One entry of {@code onException}: a handler or function that throws {@code type} (or a subclass) is settled as
 * {@code outcome} instead of as a failure. The first matching entry wins.
 *
 * @param type the exception's binary class name
 * @param outcome what the delivery becomes
 * @param delay for {@link Action#RETRY_AFTER}, how long the message is held; empty otherwise
 */
public record ExceptionRule(String type, Action outcome, Optional<Duration> delay) {
    /** What a matching exception becomes. */
    public enum Action {
        /** Acknowledged: the message is gone. */
        DROP,
        /** Negatively acknowledged at once. */
        RETRY,
        /** Held for the delay, then negatively acknowledged. */
        RETRY_AFTER
    }

    public ExceptionRule {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(delay, "delay");
        if ((outcome == Action.RETRY_AFTER) != delay.isPresent()) {
            throw new IllegalArgumentException("a delay goes with retryAfter, and only with it");
        }
    }

    /** As the manifest spells it: {@code drop}, {@code retry} or {@code retryAfter 10s}. */
    public String describeOutcome() {
        return switch (outcome) {
            case DROP -> "drop";
            case RETRY -> "retry";
            case RETRY_AFTER -> "retryAfter " + DurationText.format(delay.get());
        };
    }
}
