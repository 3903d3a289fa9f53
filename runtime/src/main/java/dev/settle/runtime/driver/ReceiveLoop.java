package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription's receive thread, the part of a {@link SubscriptionDriver} that feeds {@link Processing}: it waits
 * for the outputs, subscribes, then receives a message whenever a permit is free and hands it to the handler (on this
 * thread at {@code concurrency} 1, else through a {@link KeyOrderedExecutor}). It owns what the thread shares with the
 * calls: the permits, the running calls, the deliveries waiting for their outputs, and the messages the outage circuit
 * breaker hands out again (it is the breaker's {@link HeldForOutage.Receiving}).
 */
final class ReceiveLoop implements HeldForOutage.Receiving {
    /** The subscription's lines stay under the driver's name (the quickstart turns that logger to DEBUG). */
    private static final Logger log = LoggerFactory.getLogger(SubscriptionDriver.class);

    private static final int RECEIVE_POLL_MILLIS = 100;
    /** How often a subscription waiting for its outputs looks again. */
    private static final Duration OUTPUTS_POLL = Duration.ofMillis(500);

    private final SubscriptionSpec spec;
    private final Subscriber subscriber;
    private final PulsarConsumerCalls consumerCalls;
    private final Time time;
    private final Processing processing;
    /** The pipeline's key-hold part: asked for the messages it lets go, which go before new ones. */
    private final Pipeline.KeyHold keyHold;

    private final Permits permits;
    /** The permits: {@code concurrency} calls of {@link HandlerPort#deliveriesPerCall()} deliveries each. */
    private final int deliveriesInFlight;
    /** Deliveries whose call returned and whose acknowledgement waits for their outputs: bounded, and waited for. */
    private final PendingOutputs pendingOutputs;

    private final RunningCalls calls;
    /** Whether a stop was asked for; one instance, so a receive allocates none. */
    private final BooleanSupplier stopRequested;
    /** Gives a call's permit back once it is over; one instance for every message. */
    private final Runnable releasePermit;

    /**
     * Messages the outage circuit breaker hands out again (held ones when it closes, or a probe), taken before the
     * consumer's: they were received before anything it has now.
     */
    private final ConcurrentLinkedQueue<Redrive> redrives = new ConcurrentLinkedQueue<>();

    private record Redrive(Message<?> message, long receivedNanos) {}

    private final KeyOrderedExecutor pool;
    private final Thread receiver;

    /** Names the first port in the subscribed line. */
    private final String description;

    /** Null until subscribed. */
    private volatile Consumer<?> consumer;
    /** The client's ack-timeout tracker, out of which each received message is taken (leases); set when subscribed. */
    private volatile ClientAckTimeout ackTimeouts = ClientAckTimeout.NONE;
    /** What the subscription waits for before it can subscribe; null once subscribed. */
    private volatile String waitingFor = "not subscribed yet";

    private volatile boolean stopping;
    /**
     * Set while the outage circuit breaker is open: no message is taken from the consumer. {@code consumer.pause()}
     * alone only stops asking for more, and the broker still dispatches up to the permits already given (the receiver
     * queue, 1 000 by default): at 30 msg/s that was every message of a 5 s outage handed to the failing handler and
     * held (BreakerExactlyOnceIT). They wait in the client's queue instead, unreceived, so the client's ack timeout
     * does not run for them.
     */
    private volatile boolean paused;

    private volatile Throwable loopFailure;
    private final CompletableFuture<Throwable> fatal = new CompletableFuture<>();

    /** Why the outputs cannot be written yet (a function's output topic); empty once they can. */
    private final Supplier<Optional<String>> outputsNotReady;
    /** Sends the outputs' batches now: the subscription has nothing more to hand out. */
    private final Runnable flushOutputs;
    /** Takes from the consumer; flushes the outputs and idles the processing once the stream pauses. */
    private final QuietReceive<Message<?>> fromConsumer;
    /** Whether no call runs (every permit free); one instance, so a receive allocates none. */
    private final BooleanSupplier noCallRuns;

    /**
     * @param builder a new consumer builder for each attempt to subscribe
     * @param consumerSchema the schema the consumer reads with
     * @param handler the first port: how many deliveries a call takes, and its name for the log
     * @param wiring the outputs the loop waits for and flushes when idle
     * @param processing makes the subscription's processing, given this loop (its consumer calls and pending outputs;
     *     the breaker's receiving; where a fatal error goes)
     */
    ReceiveLoop(
            SubscriptionSpec spec,
            Supplier<ConsumerBuilder<?>> builder,
            Schema<?> consumerSchema,
            HandlerPort handler,
            Time time,
            DriverWiring wiring,
            Function<ReceiveLoop, Processing> processing) {
        this.spec = spec;
        this.outputsNotReady = wiring.outputsNotReady();
        this.flushOutputs = wiring.flushOutputs();
        this.subscriber =
                new Subscriber(spec, builder, consumerSchema, () -> stopping, reason -> waitingFor = reason, time);
        this.time = time;
        this.consumerCalls = new PulsarConsumerCalls(spec.name());
        this.pendingOutputs = new PendingOutputs(spec.outputs().maxPendingOutputs(), time);
        this.processing = processing.apply(this);
        this.keyHold = this.processing.keyHold();
        // A batch handler's deliveries each hold a permit while their batch gathers and runs (issue 47).
        this.deliveriesInFlight = spec.concurrency() * handler.deliveriesPerCall();
        this.permits = new Permits(deliveriesInFlight, time);
        this.releasePermit = permits::release;
        this.calls = new RunningCalls(spec.concurrency(), time);
        this.stopRequested = () -> stopping;
        this.description = handler.toString();
        this.pool = spec.concurrency() > 1 ? new KeyOrderedExecutor("settle-" + spec.name(), spec.concurrency()) : null;
        this.receiver = new Thread(this::receiveLoop, "settle-" + spec.name() + "-receive");
        this.noCallRuns = () -> permits.available() == deliveriesInFlight;
        this.fromConsumer = new QuietReceive<>(
                (timeout, unit) -> consumer.receive(timeout, unit), this::quiet, RECEIVE_POLL_MILLIS, time);
    }

    /** Starts the thread, which subscribes and then receives. */
    void start() {
        receiver.start();
    }

    Processing processing() {
        return processing;
    }

    PulsarConsumerCalls consumerCalls() {
        return consumerCalls;
    }

    PendingOutputs pendingOutputs() {
        return pendingOutputs;
    }

    Permits permits() {
        return permits;
    }

    RunningCalls calls() {
        return calls;
    }

    /** The client's consumer, once subscribed. */
    Optional<Consumer<?>> consumer() {
        return Optional.ofNullable(consumer);
    }

    /** What the subscription waits for before it can subscribe; empty once subscribed. */
    Optional<String> waitingFor() {
        return Optional.ofNullable(waitingFor);
    }

    /** Why the loop died, if it did. */
    Optional<Throwable> loopFailure() {
        return Optional.ofNullable(loopFailure);
    }

    /** Completes with the error after which the owner should stop (see {@link SubscriptionDriver#fatalError}). */
    CompletableFuture<Throwable> fatalError() {
        return fatal;
    }

    /** Whether the loop runs (or was stopped on purpose). */
    boolean isAlive() {
        return loopFailure == null && (receiver.isAlive() || stopping);
    }

    boolean isStopping() {
        return stopping;
    }

    /** The receive thread's state, for a description of a subscription that stands still. */
    Thread.State threadState() {
        return receiver.getState();
    }

    /**
     * Stops receiving and waits up to {@code join} for the thread to end, then until {@code deadlineNanos} for every
     * permit to come back (no call runs, no outcome is pending) and every delivery waiting for its outputs to be
     * settled; whether all that happened in time.
     */
    boolean stop(Duration join, long deadlineNanos) throws InterruptedException {
        stopping = true;
        time.await(() -> !receiver.isAlive(), join);
        // Every permit back: no call runs and no outcome is pending.
        boolean drained = permits.drain(Duration.ofNanos(Math.max(0, deadlineNanos - time.nanoTime())));
        // Then every delivery waiting for its outputs settled: acknowledged once they are stored, before the
        // consumer closes (one left behind is not acknowledged, and comes back).
        drained &= pendingOutputs.awaitNone(Duration.ofNanos(Math.max(0, deadlineNanos - time.nanoTime())));
        return drained;
    }

    /**
     * At a stop, after {@link #stop} (the receive thread is gone and no call runs), before the consumer closes: takes
     * what the consumer's queue still holds, until it is empty or {@code deadlineNanos}, and acknowledges each copy
     * whose twin was acknowledged; how many it acknowledged. Why: the broker now and then dispatches an entry twice
     * with one redelivery count, to the same consumer too (docs/pulsar-client-notes.md), and a copy still queued when
     * the consumer closes goes to another consumer, whose handler then sees an acknowledged message again (the
     * likelier reading of a RollingRestartIT failure). Every other copy taken stays unacknowledged and comes back, as it
     * would have.
     */
    int acknowledgeQueuedRepeats(long deadlineNanos) throws PulsarClientException {
        Consumer<?> subscribed = consumer;
        if (subscribed == null) {
            return 0;
        }
        // No more permits to the broker: nothing new is dispatched to a consumer about to close.
        subscribed.pause();
        int acknowledged = 0;
        Message<?> message;
        while (time.nanoTime() < deadlineNanos && (message = subscribed.receive(0, TimeUnit.MILLISECONDS)) != null) {
            if (processing.acknowledgeIfTwinAcknowledged(message, time.nanoTime())) {
                acknowledged++;
            }
        }
        return acknowledged;
    }

    /** Stops the pool's threads, if there is a pool. */
    void shutdownPool() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }

    private void subscribed(Consumer<?> subscribed) {
        consumerCalls.attach(subscribed);
        ackTimeouts =
                ClientAckTimeout.of(subscribed, spec.consumer().ackTimeout().isPresent());
        consumer = subscribed;
        log.info(
                "subscription '{}' on {}: {} consumer subscribed (ack timeout {}, {}, concurrency {}, handler {})",
                spec.name(),
                spec.topics(),
                spec.type().manifestName(),
                spec.consumer().ackTimeout().map(DurationText::format).orElse("none"),
                spec.deadLetter()
                        .map(dlq -> "maxRedeliverCount " + dlq.maxRedeliverCount() + " to " + dlq.topic())
                        .orElse("no dead-letter topic"),
                spec.concurrency(),
                description);
    }

    private void receiveLoop() {
        try {
            if (!awaitOutputs()) {
                return;
            }
            Optional<Consumer<?>> subscribed = subscriber.subscribe();
            if (subscribed.isEmpty()) {
                return;
            }
            subscribed(subscribed.get());
            if (pool == null) {
                receiveAndHandleInline();
            } else {
                receiveAndHandOff();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (PulsarClientException.AlreadyClosedException e) {
            // Closed under us: only a stop does that.
        } catch (SubscribeRefusedException e) {
            loopFailure = e;
            log.error(e.getMessage());
            fatal.complete(e);
        } catch (Throwable e) {
            if (!stopping) {
                loopFailure = e;
                log.error("subscription '{}': the receive loop died; /livez now fails", spec.name(), e);
            }
            if (e instanceof VirtualMachineError) {
                fatal.complete(e);
            }
        }
    }

    /** Waits, unready and saying why, until the outputs can be written; false when stopped first. */
    private boolean awaitOutputs() throws InterruptedException {
        Optional<String> blocked;
        while (!stopping && (blocked = outputsNotReady.get()).isPresent()) {
            waitingFor = blocked.get();
            time.await(() -> stopping || outputsNotReady.get().isEmpty(), OUTPUTS_POLL);
        }
        return !stopping;
    }

    /**
     * Concurrency 1: the handler runs on this thread (no hand-off per message). The one permit is taken for a
     * message and given back when its call is over, so an outcome that completes later (a function's future) keeps
     * the next message waiting without blocking this thread in the handler; its outputs do not.
     */
    private void receiveAndHandleInline() throws PulsarClientException, InterruptedException {
        while (!stopping) {
            Message<?> message = receiveWithPermit();
            if (message != null) {
                process(message, receivedNanos, 0);
            }
        }
    }

    /** When the message {@link #receiveWithPermit} returned last was handed out; read on the receive thread only. */
    private long receivedNanos;

    /**
     * Waits until a permit is free, receives a message, then takes its permit: null (and no permit held) when no
     * message came within {@link #RECEIVE_POLL_MILLIS} or the driver stopped first. The permit is free before the
     * receive because the client's ack-timeout clock runs from the receive: a message received while every permit
     * is out would spend its ack timeout waiting here and come back although it is then handled (ConcurrencyIT). It
     * is taken only after the receive, so a swap or a stop never waits for the receive itself; a message that meets
     * a swap's closed gate waits for that swap's pause. Left unacknowledged by a stop, a received message comes back
     * as the consumer's prefetched ones do.
     */
    private Message<?> receiveWithPermit() throws PulsarClientException, InterruptedException {
        // At maxPendingOutputs, no message is received until some outputs are stored (back-pressure).
        if (!pendingOutputs.awaitRoom(stopRequested) || !permits.awaitFree(stopRequested)) {
            return null;
        }
        // Held by the breaker, then let go by the key hold: both come before new messages (a newer message of their
        // key would park behind them).
        Redrive again = redrives.poll();
        if (again != null) {
            // Held by the breaker: it keeps the time it was first received (the ack timeout runs from then).
            receivedNanos = again.receivedNanos();
            return permits.take(stopRequested) ? again.message() : null;
        }
        KeyHolds.Parked<Message<?>> released = keyHold.nextReleased();
        if (released != null) {
            receivedNanos = released.receivedNanos();
            // Not taken at a stop: it stays unacknowledged and comes back once the consumer is gone.
            return permits.take(stopRequested) ? released.message() : null;
        }
        if (paused) {
            // Nothing is handed out but what the breaker hands out again: an exactly-once subscription's open
            // transaction commits without waiting for a delivery that will not come. No stream to wait for here, so no
            // short wait either (QuietReceive).
            if (noCallRuns.getAsBoolean()) {
                quiet();
            }
            time.await(() -> stopping || !paused || !redrives.isEmpty(), Duration.ofMillis(RECEIVE_POLL_MILLIS));
            return null;
        }
        Message<?> message = fromConsumer.next(noCallRuns);
        if (message == null) {
            return null;
        }
        // The client's ack-timeout clock stops here: the runtime owns the message until it is settled, so one held
        // behind its key or queued for a thread is never brought back (issue 41 item 8). Its retryAfter and failure
        // backoff still end before the ack timeout counted from here, as the settlement contract says.
        ackTimeouts.release(message);
        receivedNanos = time.nanoTime();
        return permits.take(stopRequested) ? message : null;
    }

    /**
     * Nothing waits to be handed out and no call runs: the outputs' batches can only wait for their delay, so they go
     * now, and an exactly-once subscription's open transaction commits without waiting out its {@code maxDelay}.
     */
    private void quiet() {
        flushOutputs.run();
        processing.idle();
    }

    /** Concurrency above 1: a message is taken only when a permit says a call may start. */
    private void receiveAndHandOff() throws PulsarClientException, InterruptedException {
        while (!stopping) {
            Message<?> message = receiveWithPermit();
            if (message == null) {
                continue;
            }
            long received = receivedNanos;
            pool.execute(SubscriptionDriver.orderingKey(message), slot -> process(message, received, slot));
        }
    }

    /**
     * Runs the handler for one message and settles it, now, when its outcome completes or when its outputs are
     * stored; gives the message's permit back once its call is over (or it was left alone, or parked behind its key),
     * exactly once.
     */
    void process(Message<?> message, long receivedNanos, int slot) {
        if (stopping) {
            // Not started before the stop: left unacknowledged, the broker gives it to another consumer.
            permits.release();
            return;
        }
        Processing.Watch watch = calls.slot(slot);
        // Given back once however the call ends: a throw escaping the settlement (a bug) kept its permit, and after
        // `concurrency` of them the subscription stood still with /livez green (issue 41).
        PermitOnce permit = new PermitOnce(releasePermit, message, ackTimeouts);
        try {
            processing.process(message, receivedNanos, watch, permit, permit);
        } catch (RuntimeException | Error escaped) {
            watch.returned();
            permit.run();
            log.error(
                    "subscription '{}': settling message {} threw past the settlement (a bug); its permit is given"
                            + " back, and the message stays unacknowledged until the ack timeout or the consumer's end",
                    spec.name(),
                    message.getMessageId(),
                    PrintableThrowable.of(escaped));
            // Logged here, once: an exception left to end the thread reaches the JVM's default handler too, which
            // is not ours (a test's Awaitility took one for its own failure). An Error still ends the thread.
            if (escaped instanceof Error error) {
                throw error;
            }
        }
    }

    @Override
    public void pause() {
        paused = true;
        Consumer<?> subscribed = consumer;
        if (subscribed != null) {
            subscribed.pause();
        }
    }

    @Override
    public void resume() {
        paused = false;
        Consumer<?> subscribed = consumer;
        if (subscribed != null) {
            subscribed.resume();
        }
    }

    @Override
    public void redrive(Message<?> message, long receivedNanos) {
        redrives.add(new Redrive(message, receivedNanos));
    }

    /**
     * Runs {@code release} the first time it is run; told the settlement, puts a message left without an outcome back
     * in the client's ack-timeout tracker. One object a message for both.
     */
    private static final class PermitOnce extends AtomicBoolean
            implements Runnable, java.util.function.Consumer<Optional<Settled>> {
        private static final long serialVersionUID = 1L;
        private final transient Runnable release;
        private final transient Message<?> message;
        private final transient ClientAckTimeout ackTimeouts;

        PermitOnce(Runnable release, Message<?> message, ClientAckTimeout ackTimeouts) {
            this.release = release;
            this.message = message;
            this.ackTimeouts = ackTimeouts;
        }

        @Override
        public void accept(Optional<Settled> how) {
            if (how.isPresent() && how.get() == Settled.NONE) {
                ackTimeouts.track(message);
            }
        }

        @Override
        public void run() {
            if (compareAndSet(false, true)) {
                release.run();
            }
        }
    }

    /** A handler hit out of memory or the like: the owner stops the runtime. */
    void fatal(VirtualMachineError error) {
        loopFailure = error;
        fatal.complete(error);
    }
}
