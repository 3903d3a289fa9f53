package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.Origin;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription's rules for one received message, shared by {@link SubscriptionDriver} and
 * {@link DetachedDriver} (the test kit's) so the two cannot drift: the way in ({@link Intake}), the pipeline's
 * parts in their slots ({@link Pipeline}) around the handler port, the settlement of its outcome (now, or when a stage
 * completes) as the subscription's guarantee says ({@link SettlementStrategy}) through {@link Settlement}, the failure
 * log and the metrics. What is on or off was chosen when the subscription started: nothing here asks. Receiving,
 * permits and threads stay the caller's. Thread-safe.
 */
final class Processing implements InFlight.Settler {
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

        /** The call now being made is {@code call}: its lease, which the caller's lease check expires. */
        default void leased(InFlight call) {}

        /** The call returned (its outcome may still be pending). */
        default void returned() {}

        /** The call returned and its outcome is pending. */
        default void pending(InFlight call) {}

        /** The pending outcome of {@code call} completed. */
        default void completed(InFlight call) {}
    }

    private final SubscriptionSpec spec;
    /**
     * The line of ports calls go to: the code behind the pipeline's call parts. Switched only by a swap holding every
     * permit of the driver (or past its grace): a call reads it once, after its watch says it is calling.
     */
    private volatile HandlerPort handler;

    private final Pipeline pipeline;
    private final SettlementStrategy strategy;
    private final Settlement<Message<?>> settlement;
    private final DriverMetrics metrics;
    private final Time time;
    private final LongSupplier wallClockMillis;
    private final FailureLog failures;
    private final Consumer<VirtualMachineError> fatal;
    /** The door: on Exclusive and Failover (one consumer per topic, no repeat seen) it lets every copy through. */
    private final Repeats repeats;
    /** What a received message becomes, and which are kept from the handler before the pipeline's slots. */
    private final Intake intake;
    /** The deliveries whose call returned and whose acknowledgement waits for their outputs. */
    private final PendingOutputs pendingOutputs;
    /** The outage circuit breaker and the messages it holds; {@link BreakerPart#OFF} when off. */
    private final BreakerPart outage;
    /** {@code handlerTimeout}: a call's lease, from its start. */
    private final long handlerTimeoutNanos;
    /**
     * Why a call may not be extended past {@code handlerTimeout} (exactly-once: its transaction's timeout is fixed
     * when it begins); null when it may.
     */
    private final String extendBound;

    /**
     * What the caller that hands the messages in brings, for the subscription's whole life.
     *
     * @param pendingOutputs where a delivery waits for its outputs (or its commit) once its call returned
     * @param callsOverlap whether a call can start before the last one is over (concurrency above 1, or a caller
     *     without permits); a call settled after its permit went back (its outputs pipelined) is not overlap
     * @param receiving what the outage circuit breaker pauses, resumes and hands held messages out again through;
     *     empty for a caller that cannot, whose breaker is off
     */
    record Caller(PendingOutputs pendingOutputs, boolean callsOverlap, Optional<HeldForOutage.Receiving> receiving) {
        Caller {
            Objects.requireNonNull(pendingOutputs, "pendingOutputs");
            Objects.requireNonNull(receiving, "receiving");
        }

        /** A caller that hands messages in without permits (one may come while the last is unsettled), no consumer. */
        static Caller withoutConsumer(PendingOutputs pendingOutputs) {
            return new Caller(pendingOutputs, true, Optional.empty());
        }
    }

    /**
     * The subscription's parts, each chosen here once: the key hold the spec asks for ({@link KeyOrderedRetries}:
     * asked before each delivery starts, told each settlement so that a retry holds its key), the outage circuit
     * breaker when the manifest and the caller allow it, the dead letters as the guarantee writes them.
     *
     * @param handler the code, which the pipeline's call parts are put around
     * @param services what the subscription calls out to
     * @param caller what the caller that hands the messages in brings
     * @param strategy how the subscription's guarantee settles a delivery
     * @param journal the pipeline's journal part: each delivery's trace and settlement record, or none
     */
    Processing(
            SubscriptionSpec spec,
            HandlerPort handler,
            SubscriptionServices services,
            Caller caller,
            SettlementStrategy strategy,
            Pipeline.Journal journal) {
        this.spec = spec;
        PendingOutputs pendingOutputs = caller.pendingOutputs();
        this.repeats = spec.type().countsRedeliveries()
                ? new DuplicateGuard(DUPLICATES_REMEMBERED, caller.callsOverlap())
                : Repeats.NONE;
        this.strategy = strategy;
        Time time = services.time();
        // The guarantee picks how dead letters are written (or leaves them all to the client's policy when Settle has
        // no writer): the part in the pipeline's "hold-for-fix or dead letter" slot, whose cap is the cap slot's. The
        // twin of a copy being dead-lettered is held back, then acknowledged again once the letter is in; the code is
        // read when a dead letter is written, as a swap changes it.
        DeadLettering<Message<?>> letters = strategy.deadLettering(
                        spec, services.deadLetters(), pendingOutputs, repeats, () -> this.handler.toString(), time)
                .holding(services.onCap());
        this.pipeline = Pipeline.of(
                spec,
                // Told only once a message is parked, after this constructor has set the settlement.
                KeyOrderedRetries.of(spec, time, services.metrics(), this::heldBehindKeyChanged),
                letters,
                journal);
        this.handler = pipeline.around(handler);
        this.outage = HeldForOutage.of(spec, caller.receiving(), time, services.metrics());
        // Long waits kept on the delay topic, and the copies read back from it; off by default.
        DelayCopies<Message<?>> delays = new DelayCopies<>(
                spec,
                services.delayCopies(),
                message -> Origin.ofMessage(
                        message.getProperties(),
                        message.getTopicName(),
                        message.getMessageId().toString()),
                Message::getProperties,
                new CopyWrites<>(strategy.copyCommits(), pendingOutputs, time),
                services.metrics(),
                time);
        this.settlement =
                new Settlement<>(spec, services.consumer(), letters, time, services.metrics(), outage, delays);
        this.intake = new Intake(spec, delays, repeats, settlement, services.metrics());
        this.metrics = services.metrics();
        this.time = time;
        this.wallClockMillis = services.wallClockMillis();
        this.failures = new FailureLog(spec.name(), time);
        this.fatal = services.fatal();
        this.pendingOutputs = pendingOutputs;
        this.handlerTimeoutNanos = Time.saturatedNanos(spec.handlerTimeout());
        this.extendBound = spec.guarantee() == Guarantee.EXACTLY_ONCE
                ? "subscription '" + spec.name() + "' is exactly-once, and a call cannot run past its handlerTimeout "
                        + DurationText.format(spec.handlerTimeout())
                        + ": the transaction its outputs go into was begun with a timeout built from it ("
                        + DurationText.format(CommitStage.timeoutOf(spec))
                        + "); raise handlerTimeout in the manifest for longer calls"
                : null;
    }

    /**
     * Runs the handler for one message and settles it, now or when its outcome completes (on the thread that
     * completes it). {@code callEnded} is told exactly once, when the call is over (its outcome complete): at the
     * settlement, or before it when an acknowledging outcome waits for the call's outputs to be durable (the
     * outputs are pipelined: the settlement waits for them on its own, counted in {@link PendingOutputs}).
     * {@code done} is told exactly once, after the settlement: how it was settled, or empty when the duplicate
     * guard kept a repeated copy from the handler (or the handler hit a {@link VirtualMachineError}), or when the key
     * hold parked the message behind its key (it comes back through {@link Pipeline.KeyHold#nextReleased}).
     */
    void process(
            Message<?> message, long receivedNanos, Watch watch, Runnable callEnded, Consumer<Optional<Settled>> done) {
        if (intake.refused(message)) {
            // Untrusted input: acknowledged, so it is neither handled nor sent round again.
            keptOut(() -> intake.acknowledge(message, receivedNanos), callEnded, done);
            return;
        }
        // Asked here, on the key's turn (the caller runs a key's messages one after another), not when received: the
        // key's earlier message may be settled as a retry between the two. Parked, its call is over: other keys go on.
        if (!pipeline.keyHold().admit(message, receivedNanos)) {
            keptOut(() -> {}, callEnded, done);
            return;
        }
        DuplicateGuard.Verdict verdict = intake.admit(message);
        if (verdict != DuplicateGuard.Verdict.HANDLE) {
            keptOut(() -> intake.skipRepeat(message, verdict, receivedNanos), callEnded, done);
            return;
        }
        UnitOfWork<Message<?>> work = intake.work(message, receivedNanos);
        pipeline.keyHold().started(work);
        pipeline.journal().started(work);
        metrics.delivered(work.attempt(), Math.max(0, wallClockMillis.getAsLong() - message.getPublishTime()));
        metrics.inFlightChanged(1);
        long started = time.nanoTime();
        // Told before the port is read: a swap past its grace waits for every call that may have read the old one.
        watch.calling(started);
        // Read once: a swap may switch the port before this call is settled, and its failure names this one.
        HandlerPort port = handler;
        pipeline.journal().called(work, port);
        // The lease: made on the calling thread (the one an expired lease interrupts), before the call, so that the
        // lease check and Delivery.extend see it from the call's first instruction. No timer per call: the check
        // visits the calls now running (RunningCalls).
        long deadline = InFlight.deadline(started, handlerTimeoutNanos);
        InFlight delivery = new InFlight(
                this,
                work,
                port,
                started,
                callEnded,
                done,
                new InFlight.Deadline(time, deadline, extendBound == null ? Long.MAX_VALUE : deadline, extendBound));
        work.leased(delivery);
        watch.leased(delivery);
        CompletableFuture<Outcome> outcome;
        try {
            strategy.begin(work);
            outcome = port.handle(work).toCompletableFuture();
        } catch (Throwable e) {
            outcome = CompletableFuture.failedFuture(PrintableThrowable.of(e));
        }
        if (!delivery.returned(outcome.isDone())) {
            // Timed out while it ran: settled as a timeout already; what it returned is not looked at.
            watch.returned();
            return;
        }
        if (outcome.isDone()) {
            watch.returned();
            callOver(delivery, outcome);
        } else {
            // Completed by another thread (a producer's send callback, the function's own executor): settled
            // there. Acknowledging and negatively acknowledging never block, so that thread is not held up.
            // Pending before returned: the call is never out of the watch's sight until it is settled.
            CompletableFuture<Outcome> pending = outcome;
            watch.pending(delivery);
            watch.returned();
            // handle, not whenComplete: that wraps the error for its own future, reading its text (issue 41).
            pending.handle((ignored, error) -> {
                watch.completed(delivery);
                if (delivery.completed()) {
                    callOver(delivery, pending);
                }
                return null;
            });
        }
    }

    /**
     * The lease check took {@code delivery} at its deadline ({@link InFlight#expire}), its caller interrupted: it is
     * settled as a {@code timeout} failure, as if the handler had thrown, and its call given back.
     */
    void timedOut(InFlight delivery) {
        long ran = time.nanoTime() - delivery.startedNanos();
        callOver(
                delivery,
                CompletableFuture.failedFuture(new HandlerTimeoutException("handler " + delivery.port()
                        + " on message " + delivery.work().id() + " ran "
                        + Duration.ofNanos(ran).toMillis()
                        + " ms, past its deadline (handlerTimeout "
                        + DurationText.format(spec.handlerTimeout())
                        + " from the call's start, or its last extend): interrupted and settled as a timeout; call"
                        + " delivery.extend(duration) for a longer call, or raise handlerTimeout")));
    }

    /**
     * Makes {@code next} (behind the pipeline's call parts) the port of every call from now on. The caller holds every
     * permit of the driver, or knows which calls may still run on the old port.
     */
    void switchTo(HandlerPort next) {
        handler = pipeline.around(next);
        outage.newCode();
    }

    /** The outage circuit breaker: its state, why, and the messages it holds. */
    BreakerPart outage() {
        return outage;
    }

    /** Messages held on the timer for a retryAfter or a failure's backoff ({@link Settlement#held}). */
    int heldRetries() {
        return settlement.held();
    }

    /**
     * At a stop, for a copy taken from the consumer's queue after the last call: acknowledges it when its twin was
     * acknowledged (the broker dispatched the entry twice), and says whether it did. Any other copy is left alone.
     */
    boolean acknowledgeIfTwinAcknowledged(Message<?> message, long receivedNanos) {
        if (!repeats.twinAcknowledged(message)) {
            return false;
        }
        intake.skipRepeat(message, DuplicateGuard.Verdict.ACKED, receivedNanos);
        return true;
    }

    /** How many copies were left alone because their twin was in hand ({@link Intake#leftToTwins}). */
    long leftToTwins() {
        return intake.leftToTwins();
    }

    /** The pipeline's key-hold part: the caller asks it for the messages it lets go, and abandons them at a stop. */
    Pipeline.KeyHold keyHold() {
        return pipeline.keyHold();
    }

    /** Each slot of the pipeline and its part, in order, naming the code that runs now. */
    List<String> parts() {
        return pipeline.parts(handler);
    }

    /** The call is over: the guarantee's strategy settles it now or later. */
    private void callOver(InFlight delivery, CompletableFuture<Outcome> completed) {
        CompletableFuture<Outcome> outcome = printable(completed);
        strategy.callOver(delivery, outcome, outcome.isCompletedExceptionally() ? null : outcome.join());
    }

    @Override
    public void settleAfter(
            InFlight delivery,
            int sends,
            Supplier<CompletableFuture<?>> until,
            Function<Throwable, CompletableFuture<Outcome>> then) {
        // Counted before the permit goes back: a stop that has every permit sees this delivery waiting, and a twin
        // that comes meanwhile is held back.
        pendingOutputs.waiting(sends);
        repeats.settlesLater(delivery.work().message());
        delivery.endCall();
        until.get().whenComplete((none, error) -> {
            try {
                settle(delivery, then.apply(error));
            } finally {
                pendingOutputs.settled(sends);
            }
        });
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

    /**
     * Settles {@code delivery} as {@code outcome} says (its port being the generation that ran the call), then gives
     * its call back if that was not done before it (it waited for its outputs or its commit).
     */
    @Override
    public void settle(InFlight delivery, CompletableFuture<Outcome> outcome) {
        try {
            settleNow(delivery, outcome);
        } finally {
            delivery.endCall();
        }
    }

    private void settleNow(InFlight delivery, CompletableFuture<Outcome> outcome) {
        UnitOfWork<Message<?>> work = delivery.work();
        Message<?> message = work.message();
        boolean later = delivery.callGivenBack();
        Settled how = null;
        boolean moved = false;
        try {
            how = delivery.isCommitted()
                    ? settlement.committed(work, outcome.join())
                    : settlement.apply(work, outcome.join());
            if (how == Settled.ACK || how == Settled.DROP) {
                outage.succeeded(delivery.startedNanos());
            } else {
                outage.settledOtherwise();
            }
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
            } else if (e instanceof MovedToCurrentGeneration
                    || (e instanceof TransactionFailedException && e.getCause() instanceof MovedToCurrentGeneration)) {
                // A canary's failure at exactly-once (or the abort of the transaction it shared): back at once with no
                // failure recorded, never a dead letter; the moved message's next attempt is the current generation's.
                // (Pulsar still counts the negative acknowledgement as a redelivery.)
                moved = true;
                how = settlement.moved(work);
                outage.settledOtherwise();
            } else {
                // A handler's bug, whatever it throws (an AssertionError, a missing class), is a failed attempt.
                Failure failure = Failure.of(e);
                failures.failed(
                        FailureLog.what(failure, delivery.port(), message.getMessageId()),
                        failure,
                        work.attempt(),
                        pipeline.cap().isLastAttempt(work.attempt())
                                ? spec.deadLetter().map(DeadLetter::topic)
                                : Optional.empty());
                // Held by the open breaker: neither nacked nor counted (an outage is not the message's fault).
                how = outage.holds(work, failure) ? Settled.ERROR : settlement.failed(work, failure);
            }
        } finally {
            metrics.inFlightChanged(-1);
            repeats.finished(message, how == Settled.ACK || how == Settled.DROP, later);
            if (how == null) {
                delivery.done(Optional.empty());
            }
        }
        // Before the call is given back: with a retry, the key is held before its next message can start.
        pipeline.keyHold()
                .settled(
                        work,
                        how,
                        outcome.isCompletedExceptionally() ? null : outcome.getNow(null),
                        // A moved message comes back whatever its attempt: its key waits for it.
                        !moved && pipeline.cap().isLastAttempt(work.attempt()));
        long handled = time.nanoTime() - delivery.startedNanos();
        // Here the settlement is known and, exactly-once, the delivery's transaction has ended: the journal's record
        // comes after it (InFlight.isCommitted says whether its acknowledgement was committed).
        pipeline.journal().settled(delivery, how, handled);
        metrics.settled(how, handled, work.generation());
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
        delivery.done(SETTLED[how.ordinal()]);
    }

    /**
     * The subscription has nothing more to hand out: an exactly-once subscription's open transaction takes no more
     * deliveries, so those it has commit without waiting out {@code commitBatch.maxDelay}.
     */
    void idle() {
        strategy.idle();
    }

    /** The subscription stops: an exactly-once subscription's transaction begun for later deliveries is aborted. */
    void stopCommits() {
        strategy.close();
    }

    /** A message kept from the handler: {@code settle} (if anything) settles it, and its call is over at once. */
    private static void keptOut(Runnable settle, Runnable callEnded, Consumer<Optional<Settled>> done) {
        try {
            settle.run();
        } finally {
            callEnded.run();
            done.accept(Optional.empty());
        }
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

    /** Messages held behind their key changed by {@code delta}: they count toward the broker's unacked limit. */
    private void heldBehindKeyChanged(int delta) {
        settlement.heldBehindKeyChanged(delta);
    }

    /** Abandons every held retryAfter and failure backoff: those messages stay unacknowledged. */
    int abandonHeld() {
        return settlement.abandonHeld() + outage.abandon();
    }
}
