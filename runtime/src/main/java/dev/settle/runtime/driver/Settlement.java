package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where an outcome becomes a call on the consumer (docs/design.md, section 1): ack and drop acknowledge, retry
 * and a thrown exception negatively acknowledge (redelivered at once through the zero backoff), retryAfter holds
 * the message on the shared timer and then negatively acknowledges it, no outcome does nothing.
 */
final class Settlement {
    private static final Logger log = LoggerFactory.getLogger(Settlement.class);

    private final String subscription;
    private final ConsumerCalls consumer;
    private final HeldRetries timer;
    private final DriverMetrics metrics;
    private final Optional<Duration> ackTimeout;
    private final OptionalInt maxAttempts;
    private final boolean batchIndexAck;
    private final AtomicBoolean batchWarningGiven = new AtomicBoolean();

    private final Object heldLock = new Object();
    /** Guarded by {@link #heldLock}. */
    private int held;
    /** Guarded by {@link #heldLock}. */
    private boolean abandoned;

    Settlement(SubscriptionSpec spec, ConsumerCalls consumer, HeldRetries timer, DriverMetrics metrics) {
        this.subscription = spec.name();
        this.consumer = consumer;
        this.timer = timer;
        this.metrics = metrics;
        this.ackTimeout = spec.ackTimeout();
        this.maxAttempts = spec.maxAttempts();
        this.batchIndexAck = spec.batchIndexAck();
    }

    /** The label of a returned outcome; every permitted {@link Outcome} has one (a test walks them all). */
    static Settled classify(Outcome outcome) {
        if (outcome == null) {
            return Settled.NONE;
        } else if (outcome instanceof Outcome.Ack) {
            return Settled.ACK;
        } else if (outcome instanceof Outcome.Retry) {
            return Settled.RETRY;
        } else if (outcome instanceof Outcome.RetryAfter) {
            return Settled.RETRY_AFTER;
        } else if (outcome instanceof Outcome.Drop) {
            return Settled.DROP;
        }
        throw new IllegalStateException("no settlement for outcome " + outcome.getClass().getName());
    }

    /**
     * Applies what the handler returned.
     *
     * @param receivedNanos when {@code receive} handed the message out: the client's ack-timeout clock runs from
     *     there, so a {@code retryAfter} must end before what is left of it
     */
    Settled apply(Message<?> message, Outcome outcome, long receivedNanos) {
        Settled how = classify(outcome);
        switch (how) {
            case ACK, DROP -> consumer.acknowledge(message);
            case RETRY -> redeliver(message);
            case RETRY_AFTER -> {
                return holdThenRedeliver(message, ((Outcome.RetryAfter) outcome).delay(), receivedNanos);
            }
            case NONE -> {
                // The ack timeout (if any) brings it back; on the last attempt that sends it to the dead letters.
                if (ackTimeout.isPresent() && isLastAttempt(message)) {
                    metrics.deadLettered();
                }
            }
            default -> throw new IllegalStateException(how.name());
        }
        return how;
    }

    /** The handler threw or the payload could not be decoded: the failure counts toward the cap. */
    Settled failed(Message<?> message) {
        redeliver(message);
        return Settled.ERROR;
    }

    private Settled holdThenRedeliver(Message<?> message, Duration delay, long receivedNanos) {
        if (ackTimeout.isPresent()) {
            Duration spent = Duration.ofNanos(System.nanoTime() - receivedNanos);
            Duration left = ackTimeout.get().minus(spent);
            if (delay.compareTo(left) >= 0) {
                log.error("subscription '{}': retryAfter({}) refused: the ack timeout {} would bring message {} back"
                                + " first ({} of it already spent); retrying at once instead. Return a delay shorter"
                                + " than the ack timeout, or raise ackTimeout in the manifest",
                        subscription, DurationText.format(delay), DurationText.format(ackTimeout.get()),
                        message.getMessageId(), spent.toMillis() + "ms");
                redeliver(message);
                return Settled.REFUSED;
            }
        }
        synchronized (heldLock) {
            if (abandoned) {
                return Settled.RETRY_AFTER;
            }
            held++;
        }
        metrics.heldChanged(1);
        timer.hold(delay, () -> release(message));
        return Settled.RETRY_AFTER;
    }

    private void release(Message<?> message) {
        synchronized (heldLock) {
            if (abandoned) {
                return;
            }
            held--;
        }
        metrics.heldChanged(-1);
        redeliver(message);
    }

    private void redeliver(Message<?> message) {
        if (isLastAttempt(message)) {
            metrics.deadLettered();
        }
        if (!batchIndexAck && !batchWarningGiven.get() && isBatched(message)
                && batchWarningGiven.compareAndSet(false, true)) {
            log.warn("subscription '{}': message {} came in a batch and is being retried without batch-index"
                            + " acknowledgement, so Pulsar redelivers the whole batch, acknowledged siblings too (and"
                            + " dead-letters them with it at the cap). If the broker has"
                            + " acknowledgmentAtBatchIndexLevelEnabled=true, set batchIndexAck: true in the manifest;"
                            + " otherwise publish without batching. Said once per subscription.",
                    subscription, message.getMessageId());
        }
        consumer.negativeAcknowledge(message);
    }

    /** Stops every wait of this subscription: those messages stay unacknowledged. */
    int abandonHeld() {
        int dropped;
        synchronized (heldLock) {
            abandoned = true;
            dropped = held;
            held = 0;
        }
        metrics.heldChanged(-dropped);
        return dropped;
    }

    int held() {
        synchronized (heldLock) {
            return held;
        }
    }

    private boolean isLastAttempt(Message<?> message) {
        return maxAttempts.isPresent() && message.getRedeliveryCount() + 1 >= maxAttempts.getAsInt();
    }

    private static boolean isBatched(Message<?> message) {
        return message.getMessageId() instanceof MessageIdAdv id && id.getBatchSize() > 1;
    }
}
