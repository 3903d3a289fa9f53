package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Message;

/**
 * The outage circuit breaker as the message path sees it: told how each call was settled, asked whether a failure is
 * held instead of being negatively acknowledged. Chosen once when the subscription starts: {@link HeldForOutage} when
 * the breaker is on, {@link #OFF} when it is off, so the message path never asks whether there is a breaker.
 */
interface BreakerPart extends Settlement.Outage<Message<?>> {
    /** The breaker off ({@code breaker: {enabled: false}}, or a caller that cannot pause): nothing is ever held. */
    BreakerPart OFF = new BreakerPart() {};

    /** A call begun at {@code startedNanos} (on the driver's clock) was settled as acknowledged or dropped. */
    default void succeeded(long startedNanos) {}

    /** A call was settled otherwise than by succeeding or failing (retry, retryAfter, no outcome). */
    default void settledOtherwise() {}

    /**
     * A call failed: whether its message is held (then it is neither negatively acknowledged nor counted); false: it
     * takes the failure's usual path.
     */
    default boolean holds(UnitOfWork<Message<?>> work, Failure failure) {
        return false;
    }

    @Override
    default boolean isDependency(Failure failure) {
        return false;
    }

    @Override
    default boolean keeps(UnitOfWork<Message<?>> kept) {
        return false;
    }

    /** New code went live (a swap): it may be the fix. */
    default void newCode() {}

    /** The subscription stops: the held messages stay unacknowledged; how many there were. */
    default int abandon() {
        return 0;
    }

    /** {@code closed}, {@code open} or {@code half-open}; {@code off} when the breaker is turned off. */
    default String state() {
        return "off";
    }

    /** Why the breaker is in its state; empty when it is off. */
    default String reason() {
        return "";
    }

    /** Messages held now. */
    default int held() {
        return 0;
    }
}
