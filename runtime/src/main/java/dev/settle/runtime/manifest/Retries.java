package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How a subscription waits before a message comes back, and whether its key waits with it.
 *
 * @param maxRetryDelay the longest {@code retryAfter} the handler declares it will ask for; checked against the
 *     ack timeout before start
 * @param failureBackoff the wait after a failure; empty to redeliver a failed message at once
 * @param order whether a retry holds its key's later messages behind it; empty for the subscription type's default
 *     ({@link RetryOrder#defaultFor})
 * @param keyHoldTimeout how long past its retry's delay a key waits for the retried message before it lets the key's
 *     later messages go (the retry went to another runtime, or never came back)
 * @param durableDelays where long waits are kept so that they survive a crash ({@code durableDelays: true}); empty,
 *     the default, to hold every wait in the process
 */
public record Retries(
        Optional<Duration> maxRetryDelay,
        Optional<FailureBackoff> failureBackoff,
        Optional<RetryOrder> order,
        Duration keyHoldTimeout,
        Optional<DurableDelays> durableDelays) {
    /** {@code keyHoldTimeout}: ten seconds past the retry's delay. */
    public static final Duration DEFAULT_KEY_HOLD_TIMEOUT = Duration.ofSeconds(10);

    /** No declared maximum; the {@link FailureBackoff#DEFAULT default failure backoff}; the type's order. */
    public static final Retries DEFAULT = new Retries(Optional.empty(), Optional.of(FailureBackoff.DEFAULT));

    public Retries {
        Objects.requireNonNull(maxRetryDelay, "maxRetryDelay");
        Objects.requireNonNull(failureBackoff, "failureBackoff");
        Objects.requireNonNull(order, "order");
        Objects.requireNonNull(keyHoldTimeout, "keyHoldTimeout");
        Objects.requireNonNull(durableDelays, "durableDelays");
        if (keyHoldTimeout.isNegative() || keyHoldTimeout.isZero()) {
            throw new IllegalArgumentException("keyHoldTimeout must be positive, was " + keyHoldTimeout);
        }
    }

    /** Every wait held in the process. */
    public Retries(
            Optional<Duration> maxRetryDelay,
            Optional<FailureBackoff> failureBackoff,
            Optional<RetryOrder> order,
            Duration keyHoldTimeout) {
        this(maxRetryDelay, failureBackoff, order, keyHoldTimeout, Optional.empty());
    }

    /** The type's order and the default {@code keyHoldTimeout}. */
    public Retries(Optional<Duration> maxRetryDelay, Optional<FailureBackoff> failureBackoff) {
        this(maxRetryDelay, failureBackoff, Optional.empty(), DEFAULT_KEY_HOLD_TIMEOUT);
    }

    /** These retries with {@code failureBackoff} instead. */
    public Retries withFailureBackoff(Optional<FailureBackoff> value) {
        return new Retries(maxRetryDelay, value, order, keyHoldTimeout, durableDelays);
    }

    /** These retries with {@code value} as their durable delays (empty: off). */
    public Retries withDurableDelays(Optional<DurableDelays> value) {
        return new Retries(maxRetryDelay, failureBackoff, order, keyHoldTimeout, value);
    }

    /** The order a subscription of {@code type} keeps: the one written, else the type's. */
    public RetryOrder orderOn(SubscriptionKind type) {
        return order.orElseGet(() -> RetryOrder.defaultFor(type));
    }
}
