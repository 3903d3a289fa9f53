package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.Publishes;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription's rules for one received message, shared by {@link SubscriptionDriver} and
 * {@link DetachedDriver} (the test kit's) so the two cannot drift: the duplicate guard, the handler port, the
 * settlement of its outcome (now, or when the stage completes) through {@link Settlement}, the failure log and the
 * metrics. Receiving, permits and threads stay the caller's. Thread-safe.
 */
final class Processing {
    /** The driver's logger: the fidelity suite reads the settled line from {@code settle run}'s debug log. */
    private static final Logger log = LoggerFactory.getLogger(SubscriptionDriver.class);
    /** Acknowledged copies remembered against a broker's repeat (seen 5 to 60 ms later): about a second's worth. */
    private static final int DUPLICATES_REMEMBERED = 16_384;
    /** What {@code done} is told, one instance per way of settling: nothing is allocated for it per message. */
    private static final Optional<Settled>[] SETTLED = settledOptions();

    /** What the caller learns about a call while it runs, for the handler timeout; each default does nothing. */
    interface Watch {
        /** The handler is being called, since {@code startedNanos}. */
        default void calling(long startedNanos) {}

        /** The call returned (its outcome may still be pending). */
        default void returned() {}

        /** The call returned and its outcome is pending, the call having started at {@code startedNanos}. */
        default void pending(Object delivery, long startedNanos) {}

        /** The pending outcome of {@code delivery} completed. */
        default void completed(Object delivery) {}
    }

    private final SubscriptionSpec spec;
    /**
     * The port calls go to, under the subscription's exception rules. Switched only by a swap holding every
     * permit of the driver (or past its grace): a call reads it once, after its watch says it is calling.
     */
    private volatile HandlerPort handler;

    private final Settlement<Message<?>> settlement;
    private final DriverMetrics metrics;
    private final Time time;
    private final LongSupplier wallClockMillis;
    private final FailureLog failures;
    private final Consumer<VirtualMachineError> fatal;
    /** Null on Exclusive and Failover: one consumer per topic, where the broker's repeat was never seen. */
    private final DuplicateGuard duplicates;
    /** The deliveries whose call returned and whose acknowledgement waits for their outputs. */
    private final PendingOutputs pendingOutputs;
    /** Null for at-least-once, whose path only reads it (before the call, and when the call is over). */
    private final CommitStage commits;
    /** Null when tracing is off: then nothing else of tracing runs per message. */
    private final Tracing tracing;
    /** Told of each settlement; {@link Journal#NONE} when the subscription keeps no journal. */
    private final Journal journal;

    /**
     * @param deadLetters writes the dead letters Settle has a cause for; null leaves them all to the client's policy
     * @param wallClockMillis the wall clock the delivery lag is measured on, against each message's publish time
     * @param fatal told of a {@link VirtualMachineError} a handler hit, before it is thrown on
     * @param callsOverlap whether a call can start before the last one is over (concurrency above 1, or a caller
     *     without permits); a call settled after its permit went back (its outputs pipelined) is not overlap
     * @param pendingOutputs where a delivery waits for its outputs once its call returned
     * @param commits the commit stage of an exactly-once subscription; null for at-least-once
     * @param tracing traces each handling; null when tracing is off
     * @param journal told of each settlement (exactly-once: once its transaction ended)
     */
    Processing(
            SubscriptionSpec spec,
            HandlerPort handler,
            ConsumerCalls<Message<?>> consumer,
            DeadLetterWriter<Message<?>> deadLetters,
            Time time,
            DriverMetrics metrics,
            LongSupplier wallClockMillis,
            Consumer<VirtualMachineError> fatal,
            boolean callsOverlap,
            PendingOutputs pendingOutputs,
            CommitStage commits,
            Tracing tracing,
            Journal journal) {
        this.spec = spec;
        this.handler = ExceptionRulesPort.of(handler, spec.name(), spec.onException());
        this.duplicates =
                spec.type().countsRedeliveries() ? new DuplicateGuard(DUPLICATES_REMEMBERED, callsOverlap) : null;
        // Exactly-once: a letter and its input's acknowledgement commit together, or neither does.
        DeadLetterWriter<Message<?>> letters = commits != null && deadLetters != null
                ? new TransactionalDeadLetters(deadLetters, commits)
                : deadLetters;
        // The code is read when a dead letter is written: a swap changes it.
        this.settlement = new Settlement<>(
                spec,
                consumer,
                letters == null ? null : new PendingLetters<>(letters, pendingOutputs),
                () -> this.handler.toString(),
                // The twin of a copy being dead-lettered is held back, then acknowledged again once the letter is in.
                duplicates == null ? Settlement.LetterWatch.none() : duplicates,
                time,
                metrics);
        this.metrics = metrics;
        this.time = time;
        this.wallClockMillis = wallClockMillis;
        this.failures = new FailureLog(spec.name(), time);
        this.fatal = fatal;
        this.pendingOutputs = pendingOutputs;
        this.commits = commits;
        this.tracing = tracing;
        this.journal = journal;
    }

    /**
     * Runs the handler for one message and settles it, now or when its outcome completes (on the thread that
     * completes it). {@code callEnded} is told exactly once, when the call is over (its outcome complete): at the
     * settlement, or before it when an acknowledging outcome waits for the call's outputs to be durable (the
     * outputs are pipelined: the settlement waits for them on its own, counted in {@link PendingOutputs}).
     * {@code done} is told exactly once, after the settlement: how it was settled, or empty when the duplicate
     * guard kept a repeated copy from the handler (or the handler hit a {@link VirtualMachineError}).
     */
    void process(
            Message<?> message, long receivedNanos, Watch watch, Runnable callEnded, Consumer<Optional<Settled>> done) {
        if (duplicates != null) {
            DuplicateGuard.Verdict verdict = duplicates.admit(message);
            if (verdict != DuplicateGuard.Verdict.HANDLE) {
                try {
                    skipRepeat(message, verdict, receivedNanos);
                } finally {
                    callEnded.run();
                    done.accept(Optional.empty());
                }
                return;
            }
        }
        UnitOfWork<Message<?>> work = work(message, receivedNanos);
        if (tracing != null) {
            work.traced(tracing.start(spec.name(), message, work.attempt()));
        }
        metrics.delivered(work.attempt(), Math.max(0, wallClockMillis.getAsLong() - message.getPublishTime()));
        metrics.inFlightChanged(1);
        long started = time.nanoTime();
        // Told before the port is read: a swap past its grace waits for every call that may have read the old one.
        watch.calling(started);
        // Read once: a swap may switch the port before this call is settled, and its failure names this one.
        HandlerPort port = handler;
        CompletableFuture<Outcome> outcome;
        try {
            if (commits != null) {
                // Before the call: every output it sends goes into the transaction.
                commits.begin(work);
            }
            outcome = port.handle(work).toCompletableFuture();
        } catch (Throwable e) {
            outcome = CompletableFuture.failedFuture(PrintableThrowable.of(e));
        }
        if (outcome.isDone()) {
            watch.returned();
            settleOrAwaitOutputs(work, port, outcome, started, callEnded, done);
        } else {
            // Completed by another thread (a producer's send callback, the function's own executor): settled
            // there. Acknowledging and negatively acknowledging never block, so that thread is not held up.
            // Pending before returned: the call is never out of the watch's sight until it is settled.
            CompletableFuture<Outcome> pending = outcome;
            watch.pending(work, started);
            watch.returned();
            // handle, not whenComplete: that wraps the error for its own future, reading its text (issue 41).
            pending.handle((ignored, error) -> {
                watch.completed(work);
                settleOrAwaitOutputs(work, port, pending, started, callEnded, done);
                return null;
            });
        }
    }

    /**
     * Makes {@code next} (under the subscription's exception rules) the port of every call from now on. The caller
     * holds every permit of the driver, or knows which calls may still run on the old port.
     */
    void switchTo(HandlerPort next) {
        handler = ExceptionRulesPort.of(next, spec.name(), spec.onException());
    }

    /**
     * The call is over. An outcome that acknowledges, of a call whose sends are not all durable yet, gives its call
     * back at once and is settled when they are (publish-then-ack: a send that fails makes the delivery a failure,
     * retried with the failure backoff); anything else is settled now, then gives its call back.
     */
    private void settleOrAwaitOutputs(
            UnitOfWork<Message<?>> work,
            HandlerPort port,
            CompletableFuture<Outcome> completed,
            long started,
            Runnable callEnded,
            Consumer<Optional<Settled>> done) {
        CompletableFuture<Outcome> outcome = printable(completed);
        Outcome returned = outcome.isCompletedExceptionally() ? null : outcome.join();
        if (commits != null) {
            settleInTransaction(work, port, outcome, returned, started, callEnded, done);
            return;
        }
        Optional<Publishes> publishes = work.outputs();
        if ((returned instanceof Outcome.Ack || returned instanceof Outcome.Drop)
                && publishes.isPresent()
                && publishes.get().count() > 0) {
            int sends = publishes.get().count();
            CompletableFuture<Void> durable = publishes.get().durable();
            if (!durable.isDone()) {
                // Counted before the permit goes back: a stop that has every permit sees this delivery waiting,
                // and a twin that comes meanwhile is held back.
                pendingOutputs.waiting(sends);
                if (duplicates != null) {
                    duplicates.settlesLater(work.message());
                }
                callEnded.run();
                durable.whenComplete((none, error) -> {
                    try {
                        settle(work, port, afterOutputs(work, outcome, error), started, true, done);
                    } finally {
                        pendingOutputs.settled(sends);
                    }
                });
                return;
            }
            if (durable.isCompletedExceptionally()) {
                // A window let go of by a stop that began while this call ran is left alone here too (issue 41).
                settleNow(
                        work,
                        port,
                        afterOutputs(
                                work,
                                outcome,
                                durable.handle((none, error) -> error).join()),
                        started,
                        callEnded,
                        done);
                return;
            }
        }
        settleNow(work, port, outcome, started, callEnded, done);
    }

    /**
     * An exactly-once delivery's call is over. An outcome that acknowledges gives its call back at once and is
     * settled when its transaction has committed (outputs stored, input acknowledged in it), or as a failure once it
     * is aborted; anything else aborts the transaction (its outputs are never read) and is settled now.
     */
    private void settleInTransaction(
            UnitOfWork<Message<?>> work,
            HandlerPort port,
            CompletableFuture<Outcome> outcome,
            Outcome returned,
            long started,
            Runnable callEnded,
            Consumer<Optional<Settled>> done) {
        if (!(returned instanceof Outcome.Ack || returned instanceof Outcome.Drop)
                || work.transaction().isEmpty()) {
            commits.notAcknowledged(work);
            settleNow(work, port, outcome, started, callEnded, done);
            return;
        }
        int sends = work.outputs().map(Publishes::count).orElse(0);
        // Counted before the permit goes back, as outputs are: a stop that has every permit sees this commit waiting,
        // and a twin that comes meanwhile is held back.
        pendingOutputs.waiting(sends);
        if (duplicates != null) {
            duplicates.settlesLater(work.message());
        }
        callEnded.run();
        commits.commit(work).whenComplete((none, error) -> {
            try {
                if (error == null) {
                    settle(work, port, outcome, started, true, true, done);
                } else {
                    settle(work, port, CompletableFuture.failedFuture(error), started, true, false, done);
                }
            } finally {
                pendingOutputs.settled(sends);
            }
        });
    }

    private void settleNow(
            UnitOfWork<Message<?>> work,
            HandlerPort port,
            CompletableFuture<Outcome> outcome,
            long started,
            Runnable callEnded,
            Consumer<Optional<Settled>> done) {
        try {
            settle(work, port, outcome, started, false, done);
        } finally {
            callEnded.run();
        }
    }

    /**
     * What an acknowledging outcome becomes once the call's outputs are done: itself when they were stored; left
     * unacknowledged, neither a failure nor a missing outcome, when one was let go of on purpose
     * ({@link LeftUnacknowledged}); else a failure.
     */
    private static CompletableFuture<Outcome> afterOutputs(
            UnitOfWork<Message<?>> work, CompletableFuture<Outcome> outcome, Throwable error) {
        if (error == null) {
            return outcome;
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof LeftUnacknowledged) {
            return CompletableFuture.failedFuture(cause);
        }
        return notDurable(work, error);
    }

    /**
     * {@code outcome}, or when it failed with an exception that throws when read, the same failure with a stand-in
     * ({@link PrintableThrowable}): joining it wraps the error in a {@code CompletionException}, whose constructor
     * reads its text.
     */
    private static CompletableFuture<Outcome> printable(CompletableFuture<Outcome> outcome) {
        if (!outcome.isCompletedExceptionally()) {
            return outcome;
        }
        // handle hands over the error as it was stored, wrapping nothing.
        Throwable error = outcome.handle((none, thrown) -> thrown).join();
        Throwable printable = PrintableThrowable.of(error);
        return printable == error ? outcome : CompletableFuture.failedFuture(printable);
    }

    private static CompletableFuture<Outcome> notDurable(UnitOfWork<Message<?>> work, Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        return CompletableFuture.failedFuture(new OutputNotDurableException(
                "an output of message " + work.id() + " was not stored (" + cause
                        + "); the input is not acknowledged and will come back",
                cause));
    }

    /**
     * Settles {@code work}, which {@code port} (the generation that ran the call) handled; {@code later} when its
     * call gave its permit back before (it waited for its outputs).
     */
    private void settle(
            UnitOfWork<Message<?>> work,
            HandlerPort port,
            CompletableFuture<Outcome> outcome,
            long started,
            boolean later,
            Consumer<Optional<Settled>> done) {
        settle(work, port, outcome, started, later, false, done);
    }

    /** @param committed whether the outcome's acknowledgement was committed in the delivery's transaction already */
    private void settle(
            UnitOfWork<Message<?>> work,
            HandlerPort port,
            CompletableFuture<Outcome> outcome,
            long started,
            boolean later,
            boolean committed,
            Consumer<Optional<Settled>> done) {
        Message<?> message = work.message();
        Settled how = null;
        try {
            how = committed ? settlement.committed(work, outcome.join()) : settlement.apply(work, outcome.join());
        } catch (CompletionException | CancellationException wrapped) {
            Throwable e =
                    wrapped instanceof CompletionException && wrapped.getCause() != null ? wrapped.getCause() : wrapped;
            if (e instanceof VirtualMachineError fatalError) {
                // Out of memory and the like: this process cannot be trusted to go on. The owner stops the
                // runtime; the message stays unacknowledged and comes back once the consumer is gone.
                fatal.accept(fatalError);
                throw fatalError;
            }
            if (e instanceof LeftUnacknowledged) {
                // Let go of at a stop: it comes back to the next consumer, its count unchanged. Not an attempt that
                // gave no answer either: on the last one, the settlement would count it dead-lettered.
                how = Settled.NONE;
            } else {
                // A handler's bug, whatever it throws (an AssertionError, a missing class), is a failed attempt.
                Failure failure = Failure.of(e);
                failures.failed(
                        failure.stage() == Failure.Stage.DECODE
                                ? "decoding the payload"
                                : failure.stage() == Failure.Stage.OUTPUT
                                        ? "storing an output of message " + message.getMessageId()
                                        : failure.stage() == Failure.Stage.TRANSACTION
                                                ? "the transaction of message " + message.getMessageId()
                                                : "handler " + port + " on message " + message.getMessageId(),
                        failure,
                        work.attempt(),
                        spec.deadLetter()
                                .filter(dlq -> dlq.isLastAttempt(work.attempt()))
                                .map(dlq -> dlq.topic()));
                how = settlement.failed(work, failure);
            }
        } finally {
            metrics.inFlightChanged(-1);
            if (duplicates != null) {
                duplicates.finished(message, how == Settled.ACK || how == Settled.DROP, later);
            }
            if (how == null) {
                done.accept(Optional.empty());
            }
        }
        Tracing.Handling trace = work.trace();
        if (trace != null) {
            trace.end(how, work.failure().orElse(null), port.toString());
        }
        long handled = time.nanoTime() - started;
        // Here the settlement is known and an exactly-once transaction has ended (committed says how).
        journal.settled(work, how, port.toString(), handled, committed);
        metrics.settled(how, handled);
        if (log.isDebugEnabled()) {
            log.debug(
                    "subscription '{}': message {}{} attempt {}{}: {}",
                    spec.name(),
                    message.getMessageId(),
                    message.hasKey() ? " (key " + message.getKey() + ")" : "",
                    work.attempt(),
                    spec.deadLetter().map(dlq -> " of " + dlq.maxAttempts()).orElse(""),
                    how.label());
        }
        done.accept(SETTLED[how.ordinal()]);
    }

    /**
     * The subscription has nothing more to hand out: an exactly-once subscription's open transaction takes no more
     * deliveries, so those it has commit without waiting out {@code commitBatch.maxDelay}.
     */
    void idle() {
        if (commits != null) {
            commits.closeOpen();
        }
    }

    /** The subscription stops: an exactly-once subscription's transaction begun for later deliveries is aborted. */
    void stopCommits() {
        if (commits != null) {
            commits.close();
        }
    }

    /** A second copy of a delivery in hand or acknowledged: the handler never sees it. */
    private void skipRepeat(Message<?> message, DuplicateGuard.Verdict verdict, long receivedNanos) {
        metrics.duplicateSuppressed();
        if (verdict == DuplicateGuard.Verdict.ACKED) {
            settlement.apply(work(message, receivedNanos), Outcome.ack());
        }
        log.debug(
                "subscription '{}': message {} attempt {} arrived again ({}); not handed to the handler twice",
                spec.name(),
                message.getMessageId(),
                message.getRedeliveryCount() + 1,
                verdict);
    }

    @SuppressWarnings("unchecked")
    private static Optional<Settled>[] settledOptions() {
        Settled[] all = Settled.values();
        Optional<Settled>[] options = new Optional[all.length];
        for (Settled how : all) {
            options[how.ordinal()] = Optional.of(how);
        }
        return options;
    }

    /** Waits up to {@code timeout} until no dead letter is being written; whether none is. */
    boolean awaitNoLetters(Duration timeout) throws InterruptedException {
        return settlement.awaitNoLetters(timeout);
    }

    /** Abandons every held retryAfter and failure backoff: those messages stay unacknowledged. */
    int abandonHeld() {
        return settlement.abandonHeld();
    }

    private static UnitOfWork<Message<?>> work(Message<?> message, long receivedNanos) {
        boolean batched = message.getMessageId() instanceof MessageIdAdv id && id.getBatchSize() > 1;
        return new UnitOfWork<>(
                message, message.getMessageId(), message.getRedeliveryCount() + 1, batched, receivedNanos);
    }
}
