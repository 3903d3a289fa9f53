package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.SendTrace;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.MessageId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where an outcome becomes a call on the consumer (docs/design.md, "The settlement contract"): ack
 * and drop acknowledge; retry negatively acknowledges at once (redelivered at once through the zero backoff);
 * retryAfter holds the message on the runtime's timer, then negatively acknowledges it; a failure is held for
 * the failure backoff, then negatively acknowledged; no outcome does nothing. On the last attempt, a delivery with a
 * cause (it failed, was retried, or its retryAfter was refused) gets its dead letter written by Settle through
 * {@link DeadLetterWriter} and is acknowledged once that is stored; without a writer, and after an ack timeout, the
 * Pulsar client's dead-letter policy writes its own copy, which has no cause (at at-least-once: an exactly-once
 * consumer has no client policy, and Settle writes every letter).
 *
 * <p>Works on any message type {@code M} through {@link ConsumerCalls}, and reads time only from {@link Time}, so
 * the same rules run against the real consumer, a unit test's fake, and a simulated broker on a manual clock.
 */
final class Settlement<M> {
    private static final Logger log = LoggerFactory.getLogger(Settlement.class);

    /**
     * Told when a copy of a message is to be dead-lettered by Settle (its letter written now, or when its last
     * attempt's hold ends) and when that is over: the duplicate guard holds the copy's twin back meanwhile, so the
     * handler does not run a {@code maxAttempts + 1}-th time and write a second letter (issue 41).
     */
    interface LetterWatch<M> {
        /** {@code message}'s copy is to be dead-lettered; told once or more before {@link #lettered}. */
        void lettering(M message);

        /**
         * {@code message}'s copy is no longer being dead-lettered: {@code acknowledged} when its letter was stored and
         * the copy acknowledged (or committed with it); false when it was negatively acknowledged or left alone.
         */
        void lettered(M message, boolean acknowledged);

        /** A watch that is told nothing. */
        static <M> LetterWatch<M> none() {
            return new LetterWatch<>() {
                @Override
                public void lettering(M message) {}

                @Override
                public void lettered(M message, boolean acknowledged) {}
            };
        }
    }

    /**
     * How long before the ack timeout a held message is let go at the latest: a negative ack takes the message
     * out of the client's ack-timeout tracker, so the two never both bring it back.
     */
    static final Duration ACK_TIMEOUT_MARGIN = Duration.ofMillis(50);
    /** The failures without a cause, one instance each: nothing is allocated for them per message. */
    private static final Failure RETRIED = Failure.without(Failure.Stage.RETRY);

    private static final Failure ACK_TIMED_OUT = Failure.without(Failure.Stage.ACK_TIMEOUT);
    /** First-failure times kept for dead letters: a few seconds of a backlog failing at full speed. */
    static final int FIRST_FAILURES_REMEMBERED = 10_000;

    /** The acknowledgement of a committed delivery (or dead letter): done with its transaction. */
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
    /** Null when the client's dead-letter policy writes every dead letter: then {@link #settleWritesLetters} is false. */
    private final DeadLetterWriter<M> deadLetters;
    /** Whether Settle writes the dead letters it has a cause for (it has a writer and a cap), decided once. */
    private final boolean settleWritesLetters;
    /** When a delivery is on its last attempt: the pipeline's cap slot, from the dead-letter policy. */
    private final Pipeline.Cap cap;
    /** Names the handler or function in dead letters; read when one is written (a swap changes it). */
    private final Supplier<String> code;
    /** Told about each copy Settle dead-letters, from the decision until its letter is stored or not. */
    private final LetterWatch<M> letterWatch;
    /**
     * When each failing message's first attempt failed here, for its dead letter; bounded, as a message that fails
     * once and then succeeds leaves its entry until it is pushed out. Guarded by itself.
     */
    private final Map<Object, Long> firstFailures = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Object, Long> eldest) {
            return size() > FIRST_FAILURES_REMEMBERED;
        }
    };

    /** Dead letters being written, whose originals are not yet acknowledged or negatively acknowledged. */
    private final AtomicInteger lettersInFlight = new AtomicInteger();

    private final Object heldLock = new Object();
    /** Guarded by {@link #heldLock}. */
    private int held;
    /** Guarded by {@link #heldLock}. */
    private boolean abandoned;

    /** A settlement whose dead letters the client's policy writes (a caller with no writer of its own). */
    Settlement(SubscriptionSpec spec, ConsumerCalls<M> consumer, Time time, DriverMetrics metrics) {
        this(spec, consumer, null, () -> "", time, metrics);
    }

    /**
     * @param deadLetters writes the dead letters of failed last attempts; null to leave them to the client
     * @param code names the handler or function in the dead letters
     */
    Settlement(
            SubscriptionSpec spec,
            ConsumerCalls<M> consumer,
            DeadLetterWriter<M> deadLetters,
            Supplier<String> code,
            Time time,
            DriverMetrics metrics) {
        this(spec, consumer, deadLetters, code, LetterWatch.none(), time, metrics);
    }

    /** @param letterWatch told about each copy Settle dead-letters, while its letter is being written */
    Settlement(
            SubscriptionSpec spec,
            ConsumerCalls<M> consumer,
            DeadLetterWriter<M> deadLetters,
            Supplier<String> code,
            LetterWatch<M> letterWatch,
            Time time,
            DriverMetrics metrics) {
        this.deadLetters = spec.deadLetter().isPresent() ? deadLetters : null;
        this.settleWritesLetters = this.deadLetters != null;
        this.cap = spec.deadLetter().map(Pipeline.Cap::of).orElse(Pipeline.Cap.NONE);
        this.code = code;
        this.letterWatch = letterWatch;
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
            record(work, new Failure(Failure.Stage.REFUSED_RETRY_AFTER, new RetryAfterRefusedException(why)));
            metrics.failed(Failure.Stage.REFUSED_RETRY_AFTER);
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
        boolean letterDue = writesLetter(kept);
        if (letterDue) {
            letterWatch.lettering(work.message());
        }
        try {
            time.schedule(delay, () -> release(kept));
        } catch (RejectedExecutionException closing) {
            // The timer is closing with the runtime: as abandoned, the message stays unacknowledged.
            unhold();
            if (letterDue) {
                letterWatch.lettered(work.message(), false);
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

    private void release(UnitOfWork<M> work) {
        if (unhold()) {
            redeliver(work);
        } else if (writesLetter(work)) {
            // Abandoned at a stop: no letter, the message stays unacknowledged.
            letterWatch.lettered(work.message(), false);
        }
    }

    /** Whether redelivering {@code work} writes its dead letter: a last attempt that failed with a cause. */
    private boolean writesLetter(UnitOfWork<M> work) {
        if (!settleWritesLetters || !isLastAttempt(work)) {
            return false;
        }
        Optional<Failure> why = work.failure();
        return why.isPresent() && why.get().stage() != Failure.Stage.ACK_TIMEOUT;
    }

    private void redeliver(UnitOfWork<M> work) {
        if (isLastAttempt(work)) {
            metrics.deadLettered();
            if (writesLetter(work)) {
                writeDeadLetter(work, work.failure().get());
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
    private void writeDeadLetter(UnitOfWork<M> work, Failure why) {
        Long first;
        synchronized (firstFailures) {
            first = firstFailures.remove(work.id());
        }
        Map<String, String> properties = DeadLetterProperties.of(
                why,
                work.attempt(),
                first == null ? OptionalLong.empty() : OptionalLong.of(first),
                time.currentTimeMillis(),
                subscription,
                code.get(),
                deadLetter.get().stackTrace());
        Tracing.Handling trace = work.trace();
        SendTrace.Sending letterSpan = null;
        if (trace != null) {
            // The letter carries its own span's context over the original's, so a replay continues this trace.
            letterSpan = trace.deadLetter(deadLetter.get().topic());
            properties = new LinkedHashMap<>(properties);
            properties.putAll(letterSpan.properties());
        }
        CompletionStage<?> written;
        // Before the letter is sent: its copy's twin is held back until it is settled (settleWritten).
        letterWatch.lettering(work.message());
        lettersInFlight.incrementAndGet();
        try {
            written = deadLetters.write(work, properties);
        } catch (RuntimeException e) {
            written = CompletableFuture.failedFuture(e);
        }
        SendTrace.Sending span = letterSpan;
        written.whenComplete((stored, error) -> {
            if (span != null) {
                span.sent(stored instanceof MessageId id ? id : null, error);
            }
            try {
                settleWritten(work, error);
            } finally {
                lettersInFlight.decrementAndGet();
            }
        });
    }

    private void settleWritten(UnitOfWork<M> work, Throwable error) {
        try {
            settleLetter(work, error);
        } finally {
            letterWatch.lettered(work.message(), error == null);
        }
    }

    private void settleLetter(UnitOfWork<M> work, Throwable error) {
        if (error == null) {
            work.acknowledging(deadLetters.acknowledgesOriginal() ? COMMITTED : consumer.acknowledge(work.message()));
        } else if (deadLetters.acknowledgesOriginal() && CommitStage.refusedAsConflict(error)) {
            // Issue 41: the broker refuses a transaction's acknowledgement of an input that is acknowledged already or
            // held by another transaction, so another copy of this message settled it or is settling it. A negative
            // acknowledgement would send it round again while that copy settles it; the broker itself delivers it
            // again if that copy's transaction aborts (PendingAckHandleImpl.handleAbort redelivers what it held).
            log.info(
                    "subscription '{}': the dead letter of message {} was discarded with its transaction: the broker"
                            + " refused the message's acknowledgement in it as a conflict, so another copy of it has"
                            + " settled it or holds it in its own transaction. The message is left alone: that copy"
                            + " settles it, or the broker delivers it again if that copy's transaction aborts",
                    subscription,
                    work.id());
        } else {
            log.warn(
                    "subscription '{}': the dead letter of message {} was not stored in {}; it is negatively"
                            + " acknowledged instead, so it is delivered again (at at-least-once the Pulsar client"
                            + " writes its own copy, without the cause, instead)",
                    subscription,
                    work.id(),
                    deadLetter.get().topic(),
                    error);
            consumer.negativeAcknowledge(work.message());
        }
    }

    /**
     * The stop's: waits up to {@code timeout} until no dead letter is being written (each then has its original
     * acknowledged or negatively acknowledged, before the consumer closes); whether none is.
     */
    boolean awaitNoLetters(Duration timeout) throws InterruptedException {
        return time.await(() -> lettersInFlight.get() == 0, timeout);
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
        } else if (settleWritesLetters) {
            firstFailure(work);
        }
    }

    /** Keeps {@code why} on the delivery, and when it first failed here for its dead letter. */
    private void record(UnitOfWork<M> work, Failure why) {
        work.failed(why);
        if (settleWritesLetters) {
            firstFailure(work);
        }
    }

    /** When attempt 1 failed; not known for a message whose first attempt another process (or life) saw. */
    private void firstFailure(UnitOfWork<M> work) {
        if (work.attempt() != 1) {
            return;
        }
        long now = time.currentTimeMillis();
        synchronized (firstFailures) {
            firstFailures.putIfAbsent(work.id(), now);
        }
    }

    private boolean isLastAttempt(UnitOfWork<M> work) {
        return cap.isLastAttempt(work.attempt());
    }
}
