package dev.settle.runtime.driver;

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
 * the failure backoff, then negatively acknowledged; no outcome does nothing. On the last attempt (the cap), a
 * delivery with a cause (it failed, was retried, or its retryAfter was refused) gets its dead letter written by Settle
 * through {@link DeadLettering} and is acknowledged once that is stored; without a writer, and after an ack timeout,
 * the Pulsar client's dead-letter policy writes its own copy, which has no cause (at at-least-once: an exactly-once
 * consumer has no client policy, and Settle writes every letter). The decision is made here; the letter is
 * {@link DeadLettering}'s.
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
    /** The failures without a cause, one instance each: nothing is allocated for them per message. */
    private static final Failure RETRIED = Failure.without(Failure.Stage.RETRY);

    private static final Failure ACK_TIMED_OUT = Failure.without(Failure.Stage.ACK_TIMEOUT);

    /** The acknowledgement of a committed delivery (or dead letter): done with its transaction. */
    private static final CompletionStage<Void> COMMITTED = CompletableFuture.completedFuture(null);

    private final String subscription;
    private final ConsumerCalls<M> consumer;
    private final Time time;
    private final DriverMetrics metrics;
    private final Optional<Duration> ackTimeout;
    private final Optional<FailureBackoff> failureBackoff;
    private final boolean batchIndexAck;
    private final AtomicBoolean batchWarningGiven = new AtomicBoolean();
    private final UnackedLimit unackedLimit;
    /** Settle's dead letters: the cap, and the letters of the deliveries this decides to dead-letter. */
    private final DeadLettering<M> letters;

    private final Object heldLock = new Object();
    /** Guarded by {@link #heldLock}. */
    private int held;
    /** Guarded by {@link #heldLock}. */
    private boolean abandoned;

    /** The outage circuit breaker, asked before a failed delivery whose backoff ended is negatively acknowledged. */
    private final Outage<M> outage;
    /** Where a long wait is kept instead of on the timer ({@code durableDelays: true}); off by default. */
    private final DelayCopies<M> delays;

    /** What the settlement asks the outage circuit breaker ({@link HeldForOutage}). */
    interface Outage<M> {
        /** Whether {@code failure} names a dependency's outage: only such a held failure may be kept. */
        boolean isDependency(Failure failure);

        /**
         * The backoff of {@code kept}, which failed with a dependency's cause, ended: true keeps it from being
         * negatively acknowledged (the open breaker holds it).
         */
        boolean keeps(UnitOfWork<M> kept);

        /** No breaker: every failure is negatively acknowledged. */
        static <M> Outage<M> none() {
            return new Outage<>() {
                @Override
                public boolean isDependency(Failure failure) {
                    return false;
                }

                @Override
                public boolean keeps(UnitOfWork<M> kept) {
                    return false;
                }
            };
        }
    }

    /**
     * @param letters writes the dead letters of failed last attempts, or leaves them to the client ({@link
     *     DeadLettering#byClient})
     * @param outage the breaker that may hold a failed delivery whose backoff ended instead of its being nacked ({@link
     *     Outage#none()}: none)
     * @param delays keeps long waits on the delay topic ({@code durableDelays: true}); off ({@link DelayCopies#off()}):
     *     every wait in memory
     */
    Settlement(
            SubscriptionSpec spec,
            ConsumerCalls<M> consumer,
            DeadLettering<M> letters,
            Time time,
            DriverMetrics metrics,
            Outage<M> outage,
            DelayCopies<M> delays) {
        this.delays = delays;
        this.outage = outage;
        this.letters = letters;
        this.subscription = spec.name();
        this.consumer = consumer;
        this.time = time;
        this.metrics = metrics;
        this.ackTimeout = spec.consumer().ackTimeout();
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
            case RETRY -> {
                retried(work);
                redeliver(work);
            }
            case RETRY_AFTER -> {
                retried(work);
                return retryAfter(work, ((Outcome.RetryAfter) outcome).delay());
            }
            case NONE -> {
                // The ack timeout (if any) brings it back; on the last attempt the client sends it to the dead
                // letters itself, with no cause: Settle never learns why the handler gave no answer.
                if (ackTimeout.isPresent()) {
                    record(work, ACK_TIMED_OUT);
                    metrics.failed(Failure.Stage.ACK_TIMEOUT);
                    if (isLastAttempt(work)) {
                        metrics.deadLettered();
                        letters.goes(work);
                    }
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
     * The delivery failed ({@code why} says where and why; kept on the unit of work): the failure counts toward the
     * cap. The message comes back after the failure backoff, at once with none, and at once on the last attempt (it
     * goes to the dead letters: waiting would only delay that). The wait ends before the ack timeout would fire.
     */
    Settled failed(UnitOfWork<M> work, Failure why) {
        record(work, why);
        metrics.failed(why.stage());
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
        hold(work, delay, true);
        return Settled.ERROR;
    }

    /**
     * A canary's delivery whose failed call is moved to the current generation ({@link MovedToCurrentGeneration}):
     * negatively acknowledged at once, whatever its attempt, with no failure recorded, so it is never dead-lettered
     * for the canary's failure. At exactly-once (the only guarantee that moves) the consumer has no dead-letter policy
     * of its own: an attempt past the cap comes back too, and only a failure of the current generation's letters it.
     */
    Settled moved(UnitOfWork<M> work) {
        consumer.negativeAcknowledge(work.message());
        return Settled.RETRY;
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
            record(work, new Failure(Failure.Stage.REFUSED_RETRY_AFTER, new RetryAfterRefusedException(why)));
            metrics.failed(Failure.Stage.REFUSED_RETRY_AFTER);
            redeliver(work);
            return Settled.REFUSED;
        }
        hold(work, delay, false);
        return Settled.RETRY_AFTER;
    }

    /** What is left of the ack timeout since the message was received; empty without an ack timeout. */
    private Optional<Duration> leftOfAckTimeout(UnitOfWork<M> work) {
        return ackTimeout.map(timeout -> timeout.minus(Duration.ofNanos(time.nanoTime() - work.receivedNanos())));
    }

    /**
     * Holds the message on the timer, counted once in the held gauge, then redelivers it; a {@code failed} one is
     * offered to the outage circuit breaker first.
     */
    private void hold(UnitOfWork<M> work, Duration delay, boolean failed) {
        if (delays.keeps(delay) && !isLastAttempt(work)) {
            keepDurably(work, delay, failed);
            return;
        }
        holdInMemory(work, delay, failed);
    }

    /**
     * {@code durableDelays: true} and a wait of at least {@code durableAfter}: a copy goes to the delay topic and the
     * original is acknowledged with it (docs/concepts.md, "Durable delays"); a copy not stored leaves the wait to the
     * process. Never on the last attempt: that one's letter is written when its wait ends, from this process.
     */
    private void keepDurably(UnitOfWork<M> work, Duration delay, boolean failed) {
        UnitOfWork<M> kept = work.forRedelivery();
        delays.keep(kept, delay, stored -> {
            switch (stored) {
                case STORED -> kept.acknowledging(consumer.acknowledge(kept.message()));
                case COMMITTED -> kept.acknowledging(COMMITTED);
                case LEFT_TO_ITS_TWIN -> {
                    // Another copy of it settles it.
                }
                case NOT_STORED -> holdInMemory(work, delay, failed);
            }
        });
    }

    private void holdInMemory(UnitOfWork<M> work, Duration delay, boolean failed) {
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
        boolean letterDue = letters.writes(kept);
        if (letterDue) {
            letters.lettering(work.message());
        }
        try {
            // Read now, kept as a flag: the wait holds neither the failure's cause nor its unit of work.
            boolean mayBeKept = failed
                    && !letterDue
                    && work.failure().map(outage::isDependency).orElse(false);
            time.schedule(delay, () -> release(kept, mayBeKept));
        } catch (RejectedExecutionException closing) {
            // The timer is closing with the runtime: as abandoned, the message stays unacknowledged.
            unhold();
            if (letterDue) {
                letters.notLettered(work.message());
            }
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

    /** @param mayBeKept whether it failed with a dependency's cause, so the outage circuit breaker may hold it */
    private void release(UnitOfWork<M> work, boolean mayBeKept) {
        if (unhold()) {
            if (mayBeKept && outage.keeps(work)) {
                // Held by the open breaker: not nacked, so the broker counts no attempt.
                return;
            }
            redeliver(work);
        } else if (letters.writes(work)) {
            // Abandoned at a stop: no letter, the message stays unacknowledged.
            letters.notLettered(work.message());
        }
    }

    private void redeliver(UnitOfWork<M> work) {
        if (isLastAttempt(work)) {
            // Held for a fix (onCap: hold), it is not a dead letter: the held topic's metric counts it once stored.
            if (!letters.goes(work)) {
                metrics.deadLettered();
            }
            if (letters.writes(work)) {
                writeDeadLetter(work);
                return;
            }
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

    /**
     * Writes the dead letter of a failed last attempt, then acknowledges the original once the letter is stored. A
     * letter not stored negatively acknowledges it: at at-least-once the client's own policy then writes its copy
     * (without a cause) or, when that fails too, delivers the message again; at exactly-once the consumer has no
     * policy, so the message comes back past the cap and its next failure is dead-lettered here. Either way nothing is
     * lost. At exactly-once a letter whose acknowledgement the broker refused as a conflict leaves the message alone:
     * another copy of it settles it.
     */
    private void writeDeadLetter(UnitOfWork<M> work) {
        letters.write(work, work.failure().get(), stored -> {
            switch (stored) {
                case STORED -> work.acknowledging(consumer.acknowledge(work.message()));
                case COMMITTED -> work.acknowledging(COMMITTED);
                case LEFT_TO_ITS_TWIN -> {
                    // Another copy of it settles it.
                }
                case NOT_STORED -> consumer.negativeAcknowledge(work.message());
            }
        });
    }

    /**
     * The stop's: waits up to {@code timeout} until no dead letter is being written (each then has its original
     * acknowledged or negatively acknowledged, before the consumer closes); whether none is.
     */
    boolean awaitNoLetters(Duration timeout) throws InterruptedException {
        long deadline = time.nanoTime() + Time.saturatedNanos(timeout);
        return letters.awaitNone(timeout)
                && delays.awaitNone(Duration.ofNanos(Math.max(0, deadline - time.nanoTime())));
    }

    /**
     * Messages held behind an earlier message of their key changed by {@code delta}: unacknowledged too, they count
     * toward the broker's unacked limit with the held retries.
     */
    void heldBehindKeyChanged(int delta) {
        unackedLimit.heldBehindKeyChanged(delta);
    }

    /** Messages held on the timer now: retryAfter delays and failures' backoffs. */
    int held() {
        synchronized (heldLock) {
            return held;
        }
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

    /** The handler asked for the message again: on its last attempt that is why it is dead-lettered. */
    private void retried(UnitOfWork<M> work) {
        if (isLastAttempt(work)) {
            record(work, RETRIED);
        } else {
            letters.failedOnce(work);
        }
    }

    /** Keeps {@code why} on the delivery, and when it first failed here for its dead letter. */
    private void record(UnitOfWork<M> work, Failure why) {
        work.failed(why);
        letters.failedOnce(work);
    }

    private boolean isLastAttempt(UnitOfWork<M> work) {
        return letters.capReached(work);
    }
}
