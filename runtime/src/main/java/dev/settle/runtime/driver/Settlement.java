package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where an outcome becomes a call on the consumer (docs/design.md, "The settlement contract"): ack
 * and drop acknowledge; retry negatively acknowledges at once (redelivered at once through the zero backoff);
 * retryAfter holds the message on the runtime's timer, then negatively acknowledges it; a failure is held for
 * the failure backoff, then negatively acknowledged; no outcome does nothing.
 *
 * <p>Works on any message type {@code M} through {@link ConsumerCalls}, and reads time only from {@link Time}, so
 * the same rules run against the real consumer, a unit test's fake, and a simulated broker on a manual clock.
 */
final class Settlement<M> {
    private static final Logger log = LoggerFactory.getLogger(Settlement.class);
    /**
     * How long before the ack timeout a held message is let go at the latest: a negative ack takes the message
     * out of the client's ack-timeout tracker, so the two never both bring it back.
     */
    static final Duration ACK_TIMEOUT_MARGIN = Duration.ofMillis(50);
    /** The acknowledgement of a committed delivery: done with its transaction. */
    private static final CompletionStage<Void> COMMITTED = CompletableFuture.completedFuture(null);

    private final String subscription;
    private final ConsumerCalls<M> consumer;
    private final Time time;
    private final DriverMetrics metrics;
    private final Optional<Duration> ackTimeout;
    private final Optional<DeadLetter> deadLetter;
    private final Optional<FailureBackoff> failureBackoff;
    private final boolean batchIndexAck;
    private final AtomicBoolean batchWarningGiven = new AtomicBoolean();
    private final UnackedLimit unackedLimit;

    private final Object heldLock = new Object();
    /** Guarded by {@link #heldLock}. */
    private int held;
    /** Guarded by {@link #heldLock}. */
    private boolean abandoned;

    Settlement(SubscriptionSpec spec, ConsumerCalls<M> consumer, Time time, DriverMetrics metrics) {
        this.subscription = spec.name();
        this.consumer = consumer;
        this.time = time;
        this.metrics = metrics;
        this.ackTimeout = spec.consumer().ackTimeout();
        this.deadLetter = spec.deadLetter();
        this.failureBackoff = spec.retries().failureBackoff();
        this.batchIndexAck = spec.consumer().batchIndexAck();
        this.unackedLimit = UnackedLimit.of(spec.name(), spec.type(), metrics);
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
        throw new IllegalStateException(
                "no settlement for outcome " + outcome.getClass().getName());
    }

    /** Applies what the handler returned. */
    Settled apply(UnitOfWork<M> work, Outcome outcome) {
        Settled how = classify(outcome);
        switch (how) {
            case ACK, DROP -> work.acknowledging(consumer.acknowledge(work.message()));
            case RETRY -> redeliver(work);
            case RETRY_AFTER -> {
                return retryAfter(work, ((Outcome.RetryAfter) outcome).delay());
            }
            case NONE -> {
                // The ack timeout (if any) brings it back; on the last attempt that sends it to the dead letters.
                if (ackTimeout.isPresent() && isLastAttempt(work)) {
                    metrics.deadLettered();
                }
            }
            default -> throw new IllegalStateException(how.name());
        }
        return how;
    }

    /**
     * An acknowledging outcome whose acknowledgement was committed in the delivery's transaction (exactly-once,
     * {@link CommitStage}): the consumer has nothing more to do.
     */
    Settled committed(UnitOfWork<M> work, Outcome outcome) {
        Settled how = classify(outcome);
        if (how != Settled.ACK && how != Settled.DROP) {
            throw new IllegalStateException("only ack and drop are committed, not " + how);
        }
        work.acknowledging(COMMITTED);
        return how;
    }

    /**
     * The delivery failed ({@link UnitOfWork#failure()} says where and why): the failure counts toward the cap. The message comes
     * back after the failure backoff, at once with none, and at once on the last attempt (it goes to the dead
     * letters: waiting would only delay that). The wait ends before the ack timeout would fire.
     */
    Settled failed(UnitOfWork<M> work) {
        if (failureBackoff.isEmpty() || isLastAttempt(work)) {
            redeliver(work);
            return Settled.ERROR;
        }
        Duration delay = failureBackoff.get().delayAfter(work.attempt());
        Optional<Duration> left = leftOfAckTimeout(work);
        if (left.isPresent()) {
            Duration latest = left.get().minus(ACK_TIMEOUT_MARGIN);
            if (latest.isNegative() || latest.isZero()) {
                redeliver(work);
                return Settled.ERROR;
            }
            if (delay.compareTo(latest) > 0) {
                delay = latest;
            }
        }
        hold(work, delay);
        return Settled.ERROR;
    }

    private Settled retryAfter(UnitOfWork<M> work, Duration delay) {
        Optional<Duration> left = leftOfAckTimeout(work);
        if (left.isPresent() && delay.compareTo(left.get()) >= 0) {
            Duration spent = ackTimeout.get().minus(left.get());
            String why = String.format(
                    "subscription '%s': retryAfter(%s) refused: the ack timeout %s would bring message %s back"
                            + " first (%s of it already spent); retrying at once instead. Return a delay shorter"
                            + " than the ack timeout, or raise ackTimeout in the manifest",
                    subscription,
                    DurationText.format(delay),
                    DurationText.format(ackTimeout.get()),
                    work.id(),
                    DurationText.format(spent));
            log.error(why);
            work.failed(new Failure(Failure.Stage.REFUSED_RETRY_AFTER, new RetryAfterRefusedException(why)));
            redeliver(work);
            return Settled.REFUSED;
        }
        hold(work, delay);
        return Settled.RETRY_AFTER;
    }

    /** What is left of the ack timeout since the message was received; empty without an ack timeout. */
    private Optional<Duration> leftOfAckTimeout(UnitOfWork<M> work) {
        return ackTimeout.map(timeout -> timeout.minus(Duration.ofNanos(time.nanoTime() - work.receivedNanos())));
    }

    /** Holds the message on the timer, counted once in the held gauge, then redelivers it. */
    private void hold(UnitOfWork<M> work, Duration delay) {
        int now;
        synchronized (heldLock) {
            if (abandoned) {
                // Stopping: the message stays unacknowledged and comes back once the consumer is gone.
                return;
            }
            now = ++held;
        }
        metrics.heldChanged(1);
        unackedLimit.held(now);
        UnitOfWork<M> kept = work.forRedelivery();
        if (isLastAttempt(work)) {
            // Its dead letter is written when the hold ends, and says why (a retryAfter on the last attempt).
            work.failure().ifPresent(kept::failed);
        }
        try {
            time.schedule(delay, () -> release(kept));
        } catch (RejectedExecutionException closing) {
            // The timer is closing with the runtime: as abandoned, the message stays unacknowledged.
            unhold();
        }
    }

    private boolean unhold() {
        int now;
        synchronized (heldLock) {
            if (abandoned) {
                return false;
            }
            now = --held;
        }
        metrics.heldChanged(-1);
        unackedLimit.held(now);
        return true;
    }

    private void release(UnitOfWork<M> work) {
        if (unhold()) {
            redeliver(work);
        }
    }

    private void redeliver(UnitOfWork<M> work) {
        if (isLastAttempt(work)) {
            metrics.deadLettered();
        }
        if (!batchIndexAck
                && work.batched()
                && !batchWarningGiven.get()
                && batchWarningGiven.compareAndSet(false, true)) {
            log.warn(
                    "subscription '{}': message {} came in a batch and is being retried without batch-index"
                            + " acknowledgement, so Pulsar redelivers the whole batch, acknowledged siblings too (and"
                            + " dead-letters them with it at the cap). If the broker has"
                            + " acknowledgmentAtBatchIndexLevelEnabled=true, set batchIndexAck: true in the manifest;"
                            + " otherwise publish without batching. Said once per subscription.",
                    subscription,
                    work.id());
        }
        consumer.negativeAcknowledge(work.message());
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
        unackedLimit.held(0);
        return dropped;
    }

    private boolean isLastAttempt(UnitOfWork<M> work) {
        return deadLetter.isPresent() && deadLetter.get().isLastAttempt(work.attempt());
    }
}
