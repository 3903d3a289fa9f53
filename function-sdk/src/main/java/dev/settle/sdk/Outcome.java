package dev.settle.sdk;

import java.time.Duration;
import java.util.Objects;

/**
 * What a handler decides about a message; the runtime turns it into exactly one call on the Pulsar consumer.
 *
 * <p>Create outcomes with the static factories. A handler may also return {@code null} (no outcome) or throw;
 * see {@link Handler#handle(Delivery)}.
 *
 * @since 0.1
 */
public sealed interface Outcome permits Outcome.Ack, Outcome.Retry, Outcome.RetryAfter, Outcome.Drop {

    /**
     * The message is handled: it is acknowledged and never delivered again.
     *
     * @return the one {@code ack} outcome, never {@code null}
     * @since 0.1
     */
    static Outcome ack() {
        return Ack.INSTANCE;
    }

    /**
     * The message failed and should come back at once: it is negatively acknowledged and redelivered within
     * milliseconds with {@link Delivery#attempt()} one higher, or sent to the dead-letter topic when this was
     * the last attempt.
     *
     * @return the one {@code retry} outcome, never {@code null}
     * @since 0.1
     */
    static Outcome retry() {
        return Retry.INSTANCE;
    }

    /**
     * The message failed and should come back after {@code delay}: the runtime holds it unacknowledged for the
     * delay, then negatively acknowledges it; it comes back with {@link Delivery#attempt()} one higher, or goes
     * to the dead-letter topic when this was the last attempt.
     *
     * <p>The delay must be shorter than the subscription's ack timeout (if it has one); a longer one is refused
     * at run time, logged, and the message is retried at once instead. A process that stops during the wait
     * loses the wait, not the message.
     *
     * @param delay how long to wait before the message comes back; positive, not {@code null}
     * @return a {@code retryAfter} outcome, never {@code null}
     * @throws IllegalArgumentException if {@code delay} is zero or negative
     * @throws NullPointerException if {@code delay} is {@code null}
     * @since 0.1
     */
    static Outcome retryAfter(Duration delay) {
        return new RetryAfter(delay);
    }

    /**
     * The message is unwanted (malformed, obsolete): it is acknowledged and never delivered again. On the wire
     * this is the same as {@link #ack()}; it is counted and logged apart.
     *
     * @return the one {@code drop} outcome, never {@code null}
     * @since 0.1
     */
    static Outcome drop() {
        return Drop.INSTANCE;
    }

    /**
     * The outcome of {@link Outcome#ack()}.
     *
     * @since 0.1
     */
    record Ack() implements Outcome {
        private static final Ack INSTANCE = new Ack();
    }

    /**
     * The outcome of {@link Outcome#retry()}.
     *
     * @since 0.1
     */
    record Retry() implements Outcome {
        private static final Retry INSTANCE = new Retry();
    }

    /**
     * The outcome of {@link Outcome#drop()}.
     *
     * @since 0.1
     */
    record Drop() implements Outcome {
        private static final Drop INSTANCE = new Drop();
    }

    /**
     * The outcome of {@link Outcome#retryAfter(Duration)}.
     *
     * @param delay how long the message is held before it comes back; positive, never {@code null}
     * @since 0.1
     */
    record RetryAfter(Duration delay) implements Outcome {
        /**
         * Checks the delay.
         *
         * @param delay how long to hold the message; positive, not {@code null}
         * @throws IllegalArgumentException if {@code delay} is zero or negative
         * @since 0.1
         */
        public RetryAfter {
            Objects.requireNonNull(delay, "retryAfter delay must not be null");
            if (delay.isNegative() || delay.isZero()) {
                throw new IllegalArgumentException(
                        "retryAfter delay must be positive, was " + delay + "; use Outcome.retry() to retry at once");
            }
        }
    }
}
