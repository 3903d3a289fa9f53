package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.DeadLetterProducer;
import dev.settle.runtime.deadletter.HeldBy;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.HoldForFix;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerStats;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.ConsumerImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one subscription: receives, calls the handler (up to {@code concurrency} calls at once, same key in
 * order), and settles each message through {@link Settlement}. It can be stopped on its own without touching the
 * other subscriptions, so a subscription can later be reloaded, and its port can be {@linkplain #swap swapped}
 * with the consumer kept open.
 *
 * <p>Threads: one receive thread; with {@code concurrency} 1 the handler runs on it (no hand-off per message),
 * otherwise on a pool of {@code concurrency} threads fed by a {@link KeyOrderedExecutor}. Either way a semaphore
 * of {@code concurrency} permits bounds the calls running: a permit is taken for a message and given back when its
 * call is over (an outcome that completes later, such as a function's future, keeps it until it completes). An
 * acknowledging outcome whose outputs are not yet durable then waits for them on its own ({@link PendingOutputs},
 * at most {@code maxPendingOutputs} sends, past which the receiver waits), and is settled on the thread that
 * completes the last send. Same-key order is the order of handler calls, and so of their sends; their settlements
 * may complete out of order. A swap waits on the permits ({@link Permits}), the stop on them and on the pending
 * outputs; nothing per message is counted for a swap.
 */
public final class SubscriptionDriver {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionDriver.class);
    private static final int RECEIVE_POLL_MILLIS = 100;
    /** How long a stop waits for the receive thread when the grace is zero: it notices the stop within a poll. */
    private static final Duration RECEIVER_JOIN_FLOOR = Duration.ofMillis(1);
    /** How often a subscription waiting for its outputs looks again. */
    private static final Duration OUTPUTS_POLL = Duration.ofMillis(500);

    private final SubscriptionSpec spec;
    private final Subscriber subscriber;
    private final PulsarConsumerCalls consumerCalls;
    private final DriverMetrics metrics;
    private final Time time;
    private final Processing processing;
    /** The pipeline's key-hold part: asked before each delivery starts, and for the messages it lets go. */
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
    /** What a settlement tells the driver: nothing, the permit went back when the call ended. */
    private static final java.util.function.Consumer<Optional<Settled>> SETTLED = how -> {};

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
    /** Settle's dead letters; null without a dead-letter topic. Closed after the consumer. */
    private final DeadLetterProducer deadLetters;
    /** Settle's held copies ({@code onCap: hold}); null without. Closed after the consumer. */
    private final DeadLetterProducer heldCopies;
    /** What becomes of a letter: the dead-letter topic, or the held topic and its re-drive. */
    private final OnCap<Message<?>> onCap;
    /** What the subscription waits for before it can subscribe; null once subscribed. */
    private volatile String waitingFor = "not subscribed yet";

    private volatile boolean stopping;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private volatile Throwable loopFailure;
    private final CompletableFuture<Throwable> fatal = new CompletableFuture<>();

    /** Why the outputs cannot be written yet (a function's output topic); empty once they can. */
    private final Supplier<Optional<String>> outputsNotReady;
    /** Sends the outputs' batches now: the subscription has nothing more to hand out. */
    private final Runnable flushOutputs;

    private SubscriptionDriver(
            PulsarClient client,
            SubscriptionSpec spec,
            HandlerPort handler,
            Schema<?> consumerSchema,
            Time time,
            DriverMetrics metrics,
            DriverWiring wiring) {
        Transactions transactions = wiring.transactions();
        if (spec.guarantee() == Guarantee.EXACTLY_ONCE && transactions == null) {
            throw new IllegalArgumentException(
                    "subscription '" + spec.name() + "' is exactly-once but was given no transactions");
        }
        this.spec = spec;
        this.outputsNotReady = wiring.outputsNotReady();
        this.flushOutputs = wiring.flushOutputs();
        this.subscriber = new Subscriber(
                spec,
                () -> ConsumerSettings.builder(client, consumerSchema, spec),
                consumerSchema,
                () -> stopping,
                reason -> waitingFor = reason,
                time);
        this.metrics = metrics;
        this.time = time;
        this.consumerCalls = new PulsarConsumerCalls(spec.name());
        this.pendingOutputs = new PendingOutputs(spec.outputs().maxPendingOutputs(), time);
        this.keyHold = KeyOrderedRetries.of(spec, time, metrics, this::heldBehindKeyChanged);
        this.deadLetters = spec.deadLetter()
                .map(dlq -> new DeadLetterProducer(
                        client, spec.name(), dlq, consumerSchema, spec.guarantee() == Guarantee.EXACTLY_ONCE, time))
                .orElse(null);
        Optional<HoldForFix> hold = spec.deadLetter().flatMap(DeadLetter::hold);
        this.heldCopies = hold.map(held -> new DeadLetterProducer(
                        client,
                        spec.name(),
                        // Created with its re-drive's subscription, so held messages are kept until re-driven.
                        new DeadLetter(
                                spec.deadLetter().get().maxAttempts(),
                                held.topic(),
                                Optional.of(HoldForFix.REDRIVE_SUBSCRIPTION),
                                spec.deadLetter().get().stackTrace()),
                        consumerSchema,
                        spec.guarantee() == Guarantee.EXACTLY_ONCE,
                        time))
                .orElse(null);
        this.onCap = hold.<OnCap<Message<?>>>map(held ->
                        HeldForFix.of(client, spec, held, wiring.letters().apply(writer(heldCopies)), metrics, time))
                .orElse(OnCap.deadLetter());
        this.processing = new Processing(
                spec,
                handler,
                new SubscriptionServices(
                        consumerCalls,
                        deadLetters == null ? null : wiring.letters().apply(writer(deadLetters)),
                        time,
                        metrics,
                        time::currentTimeMillis,
                        this::fatal,
                        onCap),
                pendingOutputs,
                // One call at a time at concurrency 1 (its one permit): the duplicate guard then takes no lock
                // unless a delivery waits for its outputs or its commit. A batch handler's deliveries overlap.
                spec.concurrency() > 1 || handler.deliveriesPerCall() > 1,
                SettlementStrategy.of(spec, transactions, consumerCalls::acknowledge, metrics, time),
                keyHold,
                // Tracing ends a delivery's span, then the settlement journal records it.
                Pipeline.Journal.both(
                        TracingJournal.of(wiring.tracing(), spec.name()), SettlementJournal.of(wiring.journal())),
                // Pauses and resumes the consumer, and hands held messages out again through the receive loop.
                new BreakerReceiving());
        // A batch handler's deliveries each hold a permit while their batch gathers and runs (issue 47).
        this.deliveriesInFlight = spec.concurrency() * handler.deliveriesPerCall();
        this.permits = new Permits(deliveriesInFlight, time);
        this.releasePermit = permits::release;
        this.calls = new RunningCalls(spec.concurrency(), time);
        this.stopRequested = () -> stopping;
        this.description = handler.toString();
        this.pool = spec.concurrency() > 1 ? new KeyOrderedExecutor("settle-" + spec.name(), spec.concurrency()) : null;
        this.receiver = new Thread(this::receiveLoop, "settle-" + spec.name() + "-receive");
    }

    /**
     * Starts the driver's thread, which subscribes (waiting out a broker outage or a busy Exclusive subscription:
     * {@link #waitingFor()} says what for) and then receives. Returns at once.
     */
    public static SubscriptionDriver start(
            PulsarClient client, SubscriptionSpec spec, HandlerPort handler, Time time, DriverMetrics metrics) {
        return start(client, spec, handler, handler.schema(), time, metrics, DriverWiring.NONE);
    }

    /**
     * As {@link #start(PulsarClient, SubscriptionSpec, HandlerPort, Time, DriverMetrics)}, connected to what
     * {@code wiring} holds, and reading with {@code consumerSchema} rather than the port's: a subscription whose code
     * was swapped keeps the schema its consumer was first opened with (the swap's fit check compares with that one).
     * It subscribes only once the wiring's outputs can be written: a function whose output topic cannot be written
     * stays unready, saying why ({@link #waitingFor()}), instead of failing every message.
     */
    public static SubscriptionDriver start(
            PulsarClient client,
            SubscriptionSpec spec,
            HandlerPort handler,
            Schema<?> consumerSchema,
            Time time,
            DriverMetrics metrics,
            DriverWiring wiring) {
        SubscriptionDriver driver =
                new SubscriptionDriver(client, spec, handler, consumerSchema, time, metrics, wiring);
        driver.receiver.start();
        return driver;
    }

    private void subscribed(Consumer<?> subscribed) {
        consumerCalls.attach(subscribed);
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

    public String subscription() {
        return spec.name();
    }

    /** The client's consumer, once subscribed: what {@code /config/effective} reads its settings from. */
    public Optional<Consumer<?>> consumer() {
        return Optional.ofNullable(consumer);
    }

    /**
     * The timeout the transactions of {@code spec} are begun with at {@code guarantee: exactly-once}
     * (docs/exactly-once.md), for {@code /config/effective}.
     */
    public static Duration transactionTimeout(SubscriptionSpec spec) {
        return CommitStage.timeoutOf(spec);
    }

    /** Whether the consumer is subscribed and connected to every topic's broker. */
    public boolean isConnected() {
        Consumer<?> subscribed = consumer;
        return subscribed != null && subscribed.isConnected();
    }

    /** What the subscription waits for before it can subscribe (the broker, a busy subscription); empty once subscribed. */
    public Optional<String> waitingFor() {
        return Optional.ofNullable(waitingFor);
    }

    /** Why the receive loop died, if it did. */
    public Optional<Throwable> loopFailure() {
        return Optional.ofNullable(loopFailure);
    }

    /**
     * Completes with the {@link VirtualMachineError} (out of memory, a stack overflow) a handler call or the
     * receive loop hit, after which the process cannot be trusted to go on, or with the
     * {@link SubscribeRefusedException} that says the subscription can never be created: its owner should stop.
     */
    public CompletableFuture<Throwable> fatalError() {
        return fatal;
    }

    /** Whether the receive loop runs (or was stopped on purpose). */
    public boolean isAlive() {
        return loopFailure == null && (receiver.isAlive() || stopping);
    }

    /**
     * How long the longest handler call now running has been running, a delivery waiting for its outcome counted
     * from its call's start; zero when none runs.
     */
    public Duration longestRunningCall() {
        return calls.longest();
    }

    public SubscriptionSpec spec() {
        return spec;
    }

    /**
     * The parts of this subscription's message path, one a slot in the order a delivery passes them (docs/design.md,
     * "The pipeline"): "slot: part", "none" for an empty slot, the handler slot naming the code that runs now.
     */
    public List<String> parts() {
        return processing.parts();
    }

    /**
     * What tells a message the broker never dispatched from one stuck here, for a test that waited in vain (issue 41):
     * the permits, the receive thread, the calls running, and the consumer's own counts (what it received, what is
     * prefetched, the flow permits it gave the broker).
     */
    public String describe() {
        StringBuilder text = new StringBuilder("subscription '" + spec.name() + "': " + permits)
                .append("; receive thread ")
                .append(receiver.getState())
                .append(stopping ? " (stopping)" : "")
                .append("; longest running call ")
                .append(longestRunningCall().toMillis())
                .append(" ms; loop failure ")
                .append(loopFailure);
        waitingFor().ifPresent(why -> text.append("; waiting for ").append(why));
        Consumer<?> subscribed = consumer;
        if (subscribed == null) {
            return text.append("; not subscribed").toString();
        }
        ConsumerStats stats = subscribed.getStats();
        text.append("; consumer ")
                .append(subscribed.getConsumerName())
                .append(subscribed.isConnected() ? " connected" : " not connected")
                // The client adds up its totals once per stats interval (60 s by default): they lag behind.
                .append(", received ")
                .append(stats.getTotalMsgsReceived())
                .append(" and acknowledged ")
                .append(stats.getTotalAcksSent())
                .append(" by its last stats interval, in its receiver queue ")
                .append(stats.getMsgNumInReceiverQueue());
        if (subscribed instanceof ConsumerImpl<?> single) {
            text.append(", flow permits not yet sent to the broker ").append(single.getAvailablePermits());
        }
        return text.toString();
    }

    /**
     * Messages parked behind their key changed by {@code delta}: they count toward the broker's unacked limit. Told only
     * once a message is parked, after the constructor has set {@link #processing}.
     */
    private void heldBehindKeyChanged(int delta) {
        processing.heldBehindKeyChanged(delta);
    }

    /** Messages held in this runtime behind an earlier message of their key that waits for its retry. */
    public int heldBehindKey() {
        return keyHold.heldBehindKey();
    }

    /** How long the oldest key now held behind a retry has been held; zero when none is. */
    public Duration oldestKeyHold() {
        return Duration.ofNanos(keyHold.oldestHoldNanos());
    }

    /** Messages the client has prefetched and the driver not yet taken (the receiver queue's fill). */
    public int messagesInReceiverQueue() {
        Consumer<?> subscribed = consumer;
        if (subscribed == null) {
            return 0;
        }
        Integer queued = subscribed.getStats().getMsgNumInReceiverQueue();
        return queued == null ? 0 : queued;
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
                process(message, receivedNanos, 0, receivedReleased);
            }
        }
    }

    /** When the message {@link #receiveWithPermit} returned last was handed out; read on the receive thread only. */
    private long receivedNanos;
    /**
     * Whether the message {@link #receiveWithPermit} returned last was let go by the key hold rather than received;
     * read on the receive thread only.
     */
    private boolean receivedReleased;

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
            receivedReleased = false;
            return permits.take(stopRequested) ? again.message() : null;
        }
        KeyHolds.Parked<Message<?>> released = keyHold.nextReleased();
        if (released != null) {
            receivedNanos = released.receivedNanos();
            receivedReleased = true;
            // Not taken at a stop: it stays unacknowledged and comes back once the consumer is gone.
            return permits.take(stopRequested) ? released.message() : null;
        }
        receivedReleased = false;
        Message<?> message = consumer.receive(0, TimeUnit.MILLISECONDS);
        if (message == null) {
            // Nothing waits to be handed out: if no call runs either, the outputs' batches can only wait for their
            // delay, so they go now (a lone message at 10 msg/s would otherwise wait out the 10 ms). A busy stream
            // always has a message waiting here and still fills its batches.
            if (permits.available() == deliveriesInFlight) {
                flushOutputs.run();
                processing.idle();
            }
            message = consumer.receive(RECEIVE_POLL_MILLIS, TimeUnit.MILLISECONDS);
            if (message == null) {
                return null;
            }
        }
        // The client's ack-timeout clock runs from the receive.
        receivedNanos = time.nanoTime();
        return permits.take(stopRequested) ? message : null;
    }

    /** Concurrency above 1: a message is taken only when a permit says a call may start. */
    private void receiveAndHandOff() throws PulsarClientException, InterruptedException {
        while (!stopping) {
            Message<?> message = receiveWithPermit();
            if (message == null) {
                continue;
            }
            long received = receivedNanos;
            boolean released = receivedReleased;
            pool.execute(orderingKey(message), slot -> process(message, received, slot, released));
        }
    }

    /**
     * Runs the handler for one message and settles it, now, when its outcome completes or when its outputs are
     * stored; gives the message's permit back once its call is over (or it was left alone, or parked behind its key),
     * exactly once. {@code released} says the key hold let it go (it was parked before).
     */
    void process(Message<?> message, long receivedNanos, int slot, boolean released) {
        if (stopping) {
            // Not started before the stop: left unacknowledged, the broker gives it to another consumer.
            permits.release();
            return;
        }
        // Asked here, on the key's turn in the executor, not when received: the key's earlier message may be settled
        // as a retry between the two. Parked, it holds no permit: other keys go on.
        if (!keyHold.admit(message, receivedNanos, released)) {
            permits.release();
            return;
        }
        Processing.Watch watch = calls.slot(slot);
        // Given back once however the call ends: a throw escaping the settlement (a bug) kept its permit, and after
        // `concurrency` of them the subscription stood still with /livez green (issue 41).
        PermitOnce permit = new PermitOnce(releasePermit);
        try {
            processing.process(message, receivedNanos, watch, permit, SETTLED);
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

    /** The outage circuit breaker's hold on this driver's consumer and receive loop. */
    private final class BreakerReceiving implements HeldForOutage.Receiving {
        @Override
        public void pause() {
            Consumer<?> subscribed = consumer;
            if (subscribed != null) {
                subscribed.pause();
            }
        }

        @Override
        public void resume() {
            Consumer<?> subscribed = consumer;
            if (subscribed != null) {
                subscribed.resume();
            }
        }

        @Override
        public void redrive(Message<?> message, long receivedNanos) {
            redrives.add(new Redrive(message, receivedNanos));
        }
    }

    /**
     * {@code code} now serves every key of this subscription (an upload, a reload, a fleet record, a restart): with
     * {@code onCap: hold}, the messages other code held go back to their topic, to be handled by it
     * (docs/dead-letters.md, "Hold for a fix"); nothing otherwise. A canary slice, which serves only some keys, must not
     * call it.
     */
    public void servedByAll(HeldBy code) {
        onCap.servedByAll(code);
    }

    /** Whether this subscription holds capped messages for a fix ({@code onCap: hold}). */
    public boolean holdsForFix() {
        return heldCopies != null;
    }

    /** {@code closed}, {@code open} or {@code half-open}: the outage circuit breaker's state; {@code off} when off. */
    public String breakerState() {
        return processing.outage().state();
    }

    /** Why the breaker is in its state (what opened it, or what closed it); empty when it is off. */
    public String breakerReason() {
        return processing.outage().reason();
    }

    /** Messages the open breaker holds unacknowledged now. */
    public int heldForOutage() {
        return processing.outage().held();
    }

    /** Runs {@code release} the first time it is run. */
    private static final class PermitOnce extends AtomicBoolean implements Runnable {
        private static final long serialVersionUID = 1L;
        private final transient Runnable release;

        PermitOnce(Runnable release) {
            this.release = release;
        }

        @Override
        public void run() {
            if (compareAndSet(false, true)) {
                release.run();
            }
        }
    }

    /**
     * What a swap did, for its owner: how long new calls waited, whether the old port's calls had all ended, and when
     * it switched (for {@link #awaitCallsBefore}).
     */
    public record Swap(long pauseNanos, boolean drained, long switchedNanos) {}

    /**
     * Makes {@code next} the port of every call from now on, with the consumer kept open (docs/live-code.md, "The
     * swap"): no new call starts; the calls running now (and outcomes still pending) get up to {@code grace} to
     * finish on the old port; then {@code next} takes over. Past the grace it takes over all the same, the old
     * calls running on: {@link #awaitCallsBefore} says when they have ended. Nothing is nacked or redelivered
     * because of a swap. After a stop it only switches.
     */
    public Swap swap(HandlerPort next, Duration grace) {
        return permits.swap(() -> processing.switchTo(next), grace);
    }

    /**
     * Waits up to {@code timeout} until no call that started at or before {@code switchedNanos} (a {@link Swap}'s)
     * runs or has its outcome pending; whether none does.
     */
    public boolean awaitCallsBefore(long switchedNanos, Duration timeout) throws InterruptedException {
        return calls.awaitNoneStartedBy(switchedNanos, timeout);
    }

    /** A handler hit out of memory or the like: the owner stops the runtime. */
    private void fatal(VirtualMachineError error) {
        loopFailure = error;
        fatal.complete(error);
    }

    /** What keeps messages in order with concurrency above 1: the ordering key, else the key; null for none. */
    static String orderingKey(Message<?> message) {
        if (message.hasOrderingKey()) {
            return new String(message.getOrderingKey(), java.nio.charset.StandardCharsets.UTF_8);
        }
        return message.hasKey() ? message.getKey() : null;
    }

    /**
     * Stops this subscription: no new messages; in-flight handler calls get up to {@code grace} to finish;
     * held retryAfter waits are abandoned (those messages stay unacknowledged); the consumer is closed, which
     * flushes pending acknowledgements. The handler's owner closes the handler afterwards. Only the first call
     * does anything.
     */
    public void stop(Duration grace) {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        long deadline = time.nanoTime() + grace.toNanos();
        stopping = true;
        try {
            Duration join = grace.compareTo(RECEIVER_JOIN_FLOOR) < 0 ? RECEIVER_JOIN_FLOOR : grace;
            time.await(() -> !receiver.isAlive(), join);
            // Every permit back: no call runs and no outcome is pending.
            boolean drained = permits.drain(Duration.ofNanos(Math.max(0, deadline - time.nanoTime())));
            // Then every delivery waiting for its outputs settled: acknowledged once they are stored, before the
            // consumer closes (one left behind is not acknowledged, and comes back).
            drained &= pendingOutputs.awaitNone(Duration.ofNanos(Math.max(0, deadline - time.nanoTime())));
            // Then every dead letter being written stored (its original acknowledged) or refused (nacked).
            drained &= processing.awaitNoLetters(Duration.ofNanos(Math.max(0, deadline - time.nanoTime())));
            if (!drained) {
                log.warn(
                        "subscription '{}': handler calls still running, or outputs not yet stored, after the {}"
                                + " grace; their messages stay unacknowledged and will be delivered again",
                        spec.name(),
                        DurationText.format(grace));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (pool != null) {
            pool.shutdownNow();
        }
        int abandoned = processing.abandonHeld();
        int parked = keyHold.abandon();
        processing.stopCommits();
        Consumer<?> subscribed = consumer;
        if (subscribed == null) {
            log.info("subscription '{}' stopped before it was subscribed", spec.name());
            return;
        }
        try {
            subscribed.close();
        } catch (PulsarClientException e) {
            log.warn(
                    "subscription '{}': closing the consumer failed; unflushed acknowledgements mean redeliveries",
                    spec.name(),
                    e);
        }
        if (deadLetters != null) {
            // After the consumer: a letter stored but whose original's ack was not flushed is written again.
            deadLetters.close();
        }
        onCap.close();
        if (heldCopies != null) {
            heldCopies.close();
        }
        log.info(
                "subscription '{}' stopped: {} held retries and {} messages held behind their key abandoned (they stay"
                        + " unacknowledged and come back)",
                spec.name(),
                abandoned,
                parked);
    }

    /** {@code producer} as the settlement writes a letter: the delivery's message, in its transaction if it has one. */
    private static DeadLetterWriter<Message<?>> writer(DeadLetterProducer producer) {
        return (work, properties) -> producer.write(work.message(), work.transaction(), properties);
    }
}
