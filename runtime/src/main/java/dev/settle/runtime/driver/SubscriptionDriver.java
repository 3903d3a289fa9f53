package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.DeadLetterProducer;
import dev.settle.runtime.deadletter.DelayCopy;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.impl.PulsarClientImpl;
import org.apache.pulsar.shade.io.netty.util.Timer;
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
 *
 * <p>Parts: the {@link ReceiveLoop} (the thread, the permits, the calls running), {@link Processing} (the per-message
 * rules) and the {@link DriverStatus} (what it shows of itself).
 */
public final class SubscriptionDriver {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionDriver.class);
    /** How long a stop waits for the receive thread when the grace is zero: it notices the stop within a poll. */
    private static final Duration RECEIVER_JOIN_FLOOR = Duration.ofMillis(1);
    /** How long a stop at least reads the consumer's queue for repeats of acknowledged copies (a full one: ~1 ms). */
    private static final Duration REPEATS_SWEEP_FLOOR = Duration.ofMillis(100);
    /** How long a stop waits for the client's timer to run what is due (it runs within a millisecond when idle). */
    private static final Duration CLIENT_TIMER_WAIT = Duration.ofSeconds(1);

    private final SubscriptionSpec spec;
    private final Time time;
    private final ReceiveLoop loop;
    private final Processing processing;
    private final DriverStatus status;
    /** The lease check: calls past their deadline given up as timeouts. */
    private final Leases leases;

    /** Settle's dead letters; null without a dead-letter topic. Closed after the consumer. */
    private final DeadLetterProducer deadLetters;
    /** Settle's held copies ({@code onCap: hold}); null without. Closed after the consumer. */
    private final DeadLetterProducer heldCopies;
    /** The copies of waits kept on the delay topic ({@code durableDelays: true}); null without. Closed after the consumer. */
    private final DeadLetterProducer delayCopies;
    /** What becomes of a letter: the dead-letter topic, or the held topic and its re-drive. */
    private final OnCap<Message<?>> onCap;

    private final AtomicBoolean stopped = new AtomicBoolean();
    /** The client's timer, which runs its negative acknowledgements' redeliveries; null for a client of another kind. */
    private final Timer clientTimer;

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
        this.time = time;
        this.clientTimer = client instanceof PulsarClientImpl impl ? impl.timer() : null;
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
        this.delayCopies = spec.retries()
                .durableDelays()
                .map(delays -> new DeadLetterProducer(
                        client,
                        spec.name(),
                        // No initial subscription: the subscription's own consumer reads the delay topic from start.
                        // The
                        // producer reads only the topic and the initial subscription; 2 is the least cap there is.
                        new DeadLetter(2, delays.topic(), Optional.empty()),
                        consumerSchema,
                        spec.guarantee() == Guarantee.EXACTLY_ONCE,
                        time))
                .orElse(null);
        this.onCap = hold.<OnCap<Message<?>>>map(held -> HeldForFix.of(
                        client, spec, held, wiring.letters().apply(writer(heldCopies)), transactions, metrics, time))
                .orElse(OnCap.deadLetter());
        this.loop = new ReceiveLoop(
                spec,
                () -> ConsumerSettings.builder(client, consumerSchema, spec),
                consumerSchema,
                handler,
                time,
                wiring,
                loop -> new Processing(
                        spec,
                        handler,
                        new SubscriptionServices(
                                loop.consumerCalls(),
                                deadLetters == null ? null : wiring.letters().apply(writer(deadLetters)),
                                time,
                                metrics,
                                time::currentTimeMillis,
                                loop::fatal,
                                onCap,
                                delayCopies == null
                                        ? null
                                        : (work, properties, deliverAt) -> delayCopies.copy(
                                                work.message(), work.transaction(), properties, deliverAt)),
                        new Processing.Caller(
                                loop.pendingOutputs(),
                                // One call at a time at concurrency 1 (its one permit): the duplicate guard then takes
                                // no lock unless a delivery waits for its outputs or its commit. A batch handler's
                                // deliveries overlap.
                                spec.concurrency() > 1 || handler.deliveriesPerCall() > 1,
                                // Pauses and resumes the consumer, and hands held messages out again through the loop.
                                Optional.of(loop)),
                        SettlementStrategy.of(spec, transactions, loop.consumerCalls()::acknowledge, metrics, time),
                        // Tracing ends a delivery's span, then the settlement journal records it.
                        Pipeline.Journal.both(
                                TracingJournal.of(wiring.tracing(), spec.name()),
                                SettlementJournal.of(wiring.journal()))));
        this.processing = loop.processing();
        this.status = new DriverStatus(spec, loop, processing);
        this.leases = new Leases(spec, time, loop.calls(), processing, metrics);
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
        driver.loop.start();
        driver.leases.start();
        return driver;
    }

    public String subscription() {
        return spec.name();
    }

    /** The client's consumer, once subscribed: what {@code /config/effective} reads its settings from. */
    public Optional<Consumer<?>> consumer() {
        return loop.consumer();
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
        return status.isConnected();
    }

    /** What the subscription waits for before it can subscribe (the broker, a busy subscription); empty once subscribed. */
    public Optional<String> waitingFor() {
        return loop.waitingFor();
    }

    /** Why the receive loop died, if it did. */
    public Optional<Throwable> loopFailure() {
        return loop.loopFailure();
    }

    /**
     * Completes with the {@link VirtualMachineError} (out of memory, a stack overflow) a handler call or the
     * receive loop hit, after which the process cannot be trusted to go on, or with the
     * {@link SubscribeRefusedException} that says the subscription can never be created: its owner should stop.
     */
    public CompletableFuture<Throwable> fatalError() {
        return loop.fatalError();
    }

    /** Whether the receive loop runs (or was stopped on purpose). */
    public boolean isAlive() {
        return loop.isAlive();
    }

    /**
     * How long the longest handler call now running has been running, a delivery waiting for its outcome counted
     * from its call's start; zero when none runs.
     */
    public Duration longestRunningCall() {
        return status.longestRunningCall();
    }

    public SubscriptionSpec spec() {
        return spec;
    }

    /**
     * Threads still in a handler call that was given up at its deadline and interrupted, more than a second ago: they
     * ignore the interrupt. At {@code concurrency} of them the subscription handles nothing more.
     */
    public int callsIgnoringInterrupt() {
        return leases.callsIgnoringInterrupt();
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
        return status.describe();
    }

    /** Messages held in this runtime behind an earlier message of their key that waits for its retry. */
    public int heldBehindKey() {
        return status.heldBehindKey();
    }

    /** How long the oldest key now held behind a retry has been held; zero when none is. */
    public Duration oldestKeyHold() {
        return status.oldestKeyHold();
    }

    /** Messages the client has prefetched and the driver not yet taken (the receiver queue's fill). */
    public int messagesInReceiverQueue() {
        return status.messagesInReceiverQueue();
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
        return status.breakerState();
    }

    /** Why the breaker is in its state (what opened it, or what closed it); empty when it is off. */
    public String breakerReason() {
        return status.breakerReason();
    }

    /** Messages the open breaker holds unacknowledged now. */
    public int heldForOutage() {
        return status.heldForOutage();
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
        return loop.permits().swap(() -> processing.switchTo(next), grace);
    }

    /**
     * Waits up to {@code timeout} until no call that started at or before {@code switchedNanos} (a {@link Swap}'s)
     * runs or has its outcome pending; whether none does.
     */
    public boolean awaitCallsBefore(long switchedNanos, Duration timeout) throws InterruptedException {
        return loop.calls().awaitNoneStartedBy(switchedNanos, timeout);
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
     * held retryAfter waits are abandoned (those messages stay unacknowledged); repeats of acknowledged copies left
     * in the consumer's queue or behind their key are acknowledged; the consumer is closed, which flushes pending
     * acknowledgements. The handler's owner closes the handler afterwards. Only the first call does anything.
     */
    public void stop(Duration grace) {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        long deadline = time.nanoTime() + grace.toNanos();
        try {
            Duration join = grace.compareTo(RECEIVER_JOIN_FLOOR) < 0 ? RECEIVER_JOIN_FLOOR : grace;
            boolean drained = loop.stop(join, deadline);
            // Then every dead letter being written stored (its original acknowledged) or refused (nacked).
            drained &= processing.awaitNoLetters(Duration.ofNanos(Math.max(0, deadline - time.nanoTime())));
            // A call given up at its deadline gave its permit back, but its thread may still be in the handler.
            drained &= loop.calls()
                    .awaitNoneStartedBy(time.nanoTime(), Duration.ofNanos(Math.max(0, deadline - time.nanoTime())));
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
        int repeatsAcknowledged = acknowledgeQueuedRepeats(deadline);
        // After the grace, not before: a call past its deadline during the grace is given up as a timeout.
        leases.end();
        loop.shutdownPool();
        int abandoned = processing.abandonHeld();
        List<Message<?>> parked = processing.keyHold().abandon();
        // A repeat parked behind its key is kept from the handler as one in the queue is: acknowledged if its twin was.
        long now = time.nanoTime();
        int parkedRepeats = 0;
        for (Message<?> message : parked) {
            if (processing.acknowledgeIfTwinAcknowledged(message, now)) {
                parkedRepeats++;
            }
        }
        processing.stopCommits();
        Consumer<?> subscribed = loop.consumer().orElse(null);
        if (subscribed == null) {
            log.info("subscription '{}' stopped before it was subscribed", spec.name());
            return;
        }
        awaitNegativeAcknowledgementsSent();
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
        if (delayCopies != null) {
            delayCopies.close();
        }
        log.info(
                "subscription '{}' stopped: {} held retries and {} messages held behind their key abandoned (they stay"
                        + " unacknowledged and come back), {} repeats in the consumer's queue or behind their key"
                        + " acknowledged (their twin was)",
                spec.name(),
                abandoned,
                parked.size() - parkedRepeats,
                repeatsAcknowledged + parkedRepeats);
    }

    /**
     * Before the consumer closes: waits, twice, until the client's timer has run every task due by now, so that the
     * redelivery of a message negatively acknowledged just before the stop has been asked for while the consumer is
     * still open. Why: run while the consumer is closing, the client's redelivery finds it not ready and closes the
     * whole connection ({@code ConsumerImpl}: "Reconnecting the client to redeliver the messages"), which can lose the
     * acknowledgements the close has just flushed; the broker then gave the messages acknowledged in the last 100 ms
     * to the other consumer (RollingRestartIT: 26 of them, 2026-12-07). Twice, for a nack sent by a wait that ended
     * as the held waits were abandoned. At most {@link #CLIENT_TIMER_WAIT} a round.
     */
    private void awaitNegativeAcknowledgementsSent() {
        if (clientTimer != null) {
            awaitTimerRounds(clientTimer, 2, CLIENT_TIMER_WAIT);
        }
    }

    /**
     * Waits until {@code timer} has run everything due by now, {@code rounds} times one after another, each at most
     * {@code bound}: whether every round ran in time (false too when the timer is stopped or this thread interrupted).
     */
    static boolean awaitTimerRounds(Timer timer, int rounds, Duration bound) {
        for (int round = 0; round < rounds; round++) {
            CountDownLatch ran = new CountDownLatch(1);
            try {
                timer.newTimeout(timeout -> ran.countDown(), 0, TimeUnit.MILLISECONDS);
                if (!ran.await(bound.toMillis(), TimeUnit.MILLISECONDS)) {
                    return false;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (RuntimeException timerStopped) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@link ReceiveLoop#acknowledgeQueuedRepeats}, with at least {@link #REPEATS_SWEEP_FLOOR} even when the grace is
     * spent: a receive from the client's queue takes microseconds, and a repeat left there reaches another consumer.
     */
    private int acknowledgeQueuedRepeats(long deadline) {
        try {
            return loop.acknowledgeQueuedRepeats(Math.max(deadline, time.nanoTime() + REPEATS_SWEEP_FLOOR.toNanos()));
        } catch (PulsarClientException e) {
            log.warn(
                    "subscription '{}': reading the consumer's queue at the stop failed; a repeat of an acknowledged"
                            + " message left there can reach another consumer",
                    spec.name(),
                    e);
            return 0;
        }
    }

    /** {@code producer} as the settlement writes a letter: the delivery's message, in its transaction if it has one. */
    private static DeadLetterWriter<Message<?>> writer(DeadLetterProducer producer) {
        // A delay copy's letter names the message it copies, so a replay sends it back to that message's topic.
        return (work, properties) -> work.copyOf().isPresent()
                ? producer.write(
                        work.message(),
                        DelayCopy.topicOf(work.copyOf().get()),
                        DelayCopy.messageIdOf(work.copyOf().get()),
                        work.transaction(),
                        properties)
                : producer.write(work.message(), work.transaction(), properties);
    }
}
