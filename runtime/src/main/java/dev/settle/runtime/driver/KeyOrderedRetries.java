package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.Origin;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.IntConsumer;
import org.apache.pulsar.client.api.Message;

/**
 * The pipeline's key-hold part (docs/concepts.md, "Key-ordered retries"): a retry of a message holds its key's later
 * messages behind it in this runtime, through the subscription's {@link KeyHolds} table. On by default on Key_Shared,
 * {@code order: key} on Shared; never on Exclusive or Failover, where a retry rewinds every unacknowledged message.
 *
 * <p>What holds a key: a settlement that brings the message back ({@code retry()}, {@code retryAfter}, a refused
 * {@code retryAfter}, a failure), unless it was the last attempt (the message then goes to the dead letters, and its
 * key goes on without it). The hold's timeout counts from the settlement: the retry's delay ({@code retryAfter}'s, the
 * failure backoff's, none for {@code retry()}) plus {@code keyHoldTimeout}.
 *
 * <p>What it does not cover: a message whose call started before the retry was settled (a function's outcome that
 * completes later lets the key's next call start first) is handled as before.
 */
final class KeyOrderedRetries implements Pipeline.KeyHold {
    private final KeyHolds<Message<?>> table;
    private final Optional<FailureBackoff> failureBackoff;
    private final Duration keyHoldTimeout;

    private KeyOrderedRetries(SubscriptionSpec spec, Time time, KeyHolds.Listener listener) {
        this.failureBackoff = spec.retries().failureBackoff();
        this.keyHoldTimeout = spec.retries().keyHoldTimeout();
        // With durable delays a retry comes back as a copy, a new message: the hold knows it by its origin id.
        this.table = new KeyHolds<>(
                SubscriptionDriver::orderingKey,
                spec.retries().durableDelays().isPresent()
                        ? message -> Origin.ofMessage(
                                message.getProperties(),
                                message.getTopicName(),
                                message.getMessageId().toString())
                        : Message::getMessageId,
                keyHoldTimeout,
                time,
                listener);
    }

    /**
     * The key-hold part of {@code spec}'s subscription: this when its retries keep key order, else none. The count of
     * messages held behind their key goes to {@code metrics} and to {@code unacked} (the broker's unacked limit).
     */
    static Pipeline.KeyHold of(SubscriptionSpec spec, Time time, DriverMetrics metrics, IntConsumer unacked) {
        if (!spec.keyOrderedRetries()) {
            return Pipeline.KeyHold.NONE;
        }
        return new KeyOrderedRetries(spec, time, new KeyHolds.Listener() {
            @Override
            public void heldBehindKeyChanged(int delta) {
                metrics.heldBehindKeyChanged(delta);
                unacked.accept(delta);
            }

            @Override
            public void keyHoldTimedOut() {
                metrics.keyHoldTimedOut();
            }

            @Override
            public void keyGap() {
                metrics.keyGap();
            }
        });
    }

    @Override
    public boolean admit(Message<?> message, long receivedNanos) {
        return table.admit(message, receivedNanos);
    }

    @Override
    public void started(UnitOfWork<Message<?>> work) {
        // A retry whose hold timed out comes back as a redelivery: a first delivery is never one.
        if (work.attempt() == 1) {
            return;
        }
        int passed = table.passedBy(work.message());
        if (passed > 0) {
            work.keyPassedBy(passed);
        }
    }

    @Override
    public KeyHolds.Parked<Message<?>> nextReleased() {
        return table.nextReleased();
    }

    @Override
    public void settled(UnitOfWork<Message<?>> work, Settled how, Outcome returned, boolean lastAttempt) {
        boolean comesBack =
                how == Settled.RETRY || how == Settled.RETRY_AFTER || how == Settled.REFUSED || how == Settled.ERROR;
        table.settled(
                work.message(), comesBack && !lastAttempt, retryIn(work, how, returned), comesBack && lastAttempt);
    }

    /** How long the message waits before it is negatively acknowledged. */
    private Duration retryIn(UnitOfWork<Message<?>> work, Settled how, Outcome returned) {
        if (how == Settled.RETRY_AFTER && returned instanceof Outcome.RetryAfter after) {
            return after.delay();
        }
        if (how == Settled.ERROR && failureBackoff.isPresent()) {
            return failureBackoff.get().delayAfter(work.attempt());
        }
        return Duration.ZERO;
    }

    @Override
    public int heldBehindKey() {
        return table.heldBehindKey();
    }

    @Override
    public long oldestHoldNanos() {
        return table.oldestHoldNanos();
    }

    @Override
    public List<Message<?>> abandon() {
        return table.abandon();
    }

    @Override
    public String describe() {
        return "retries keep key order (keyHoldTimeout " + DurationText.format(keyHoldTimeout) + ")";
    }
}
