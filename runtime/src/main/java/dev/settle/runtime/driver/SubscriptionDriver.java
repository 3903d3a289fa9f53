package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one subscription: receives, calls the handler (up to {@code concurrency} calls at once, same key in
 * order), and settles each message through {@link Settlement}. It can be stopped on its own without touching the
 * other subscriptions, so a subscription can later be reloaded.
 *
 * <p>Threads: one receive thread; with {@code concurrency} 1 the handler runs on it (no hand-off per message),
 * otherwise on a pool of {@code concurrency} threads fed by a {@link KeyOrderedExecutor}, where a semaphore of
 * {@code concurrency} permits bounds the messages taken from the consumer and not yet settled.
 */
public final class SubscriptionDriver {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionDriver.class);
    private static final int RECEIVE_POLL_MILLIS = 100;
    private static final long IDLE = Long.MIN_VALUE;
    /** Acknowledged copies remembered against a broker's repeat (seen 5 to 60 ms later): about a second's worth. */
    private static final int DUPLICATES_REMEMBERED = 16_384;

    private final SubscriptionSpec spec;
    private final Subscriber subscriber;
    private final PulsarConsumerCalls calls;
    private final HandlerPort handler;
    private final DriverMetrics metrics;
    private final Time time;
    private final Settlement<Message<?>> settlement;
    private final FailureLog failures;
    private final DuplicateGuard duplicates = new DuplicateGuard(DUPLICATES_REMEMBERED);
    private final Semaphore permits;
    private final KeyOrderedExecutor pool;
    private final Thread receiver;
    /** Per calling thread: when its current handler call started (nanoTime), or {@link #IDLE}. */
    private final AtomicLongArray callStarts;

    /** Null until subscribed. */
    private volatile Consumer<?> consumer;
    /** What the subscription waits for before it can subscribe; null once subscribed. */
    private volatile String waitingFor = "not subscribed yet";

    private volatile boolean stopping;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private volatile Throwable loopFailure;
    private final CompletableFuture<Throwable> fatal = new CompletableFuture<>();

    private SubscriptionDriver(
            PulsarClient client, SubscriptionSpec spec, HandlerPort handler, Time time, DriverMetrics metrics) {
        this.spec = spec;
        this.subscriber = new Subscriber(
                spec,
                () -> ConsumerSettings.builder(client, handler.schema(), spec),
                handler.schema(),
                () -> stopping,
                reason -> waitingFor = reason,
                time);
        this.handler = handler;
        this.metrics = metrics;
        this.time = time;
        this.calls = new PulsarConsumerCalls(spec.name());
        this.settlement = new Settlement<>(spec, calls, time, metrics);
        this.failures = new FailureLog(spec.name(), time);
        this.permits = new Semaphore(spec.concurrency());
        this.callStarts = new AtomicLongArray(spec.concurrency());
        for (int slot = 0; slot < spec.concurrency(); slot++) {
            callStarts.set(slot, IDLE);
        }
        this.pool = spec.concurrency() > 1 ? new KeyOrderedExecutor("settle-" + spec.name(), spec.concurrency()) : null;
        this.receiver = new Thread(this::receiveLoop, "settle-" + spec.name() + "-receive");
    }

    /**
     * Starts the driver's thread, which subscribes (waiting out a broker outage or a busy Exclusive subscription:
     * {@link #waitingFor()} says what for) and then receives. Returns at once.
     */
    public static SubscriptionDriver start(
            PulsarClient client, SubscriptionSpec spec, HandlerPort handler, Time time, DriverMetrics metrics) {
        SubscriptionDriver driver = new SubscriptionDriver(client, spec, handler, time, metrics);
        driver.receiver.start();
        return driver;
    }

    private void subscribed(Consumer<?> subscribed) {
        calls.attach(subscribed);
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
                handler);
    }

    public String subscription() {
        return spec.name();
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

    /** How long the longest handler call now running has been running; zero when none runs. */
    public Duration longestRunningCall() {
        long now = time.nanoTime();
        long longest = 0;
        for (int i = 0; i < callStarts.length(); i++) {
            long started = callStarts.get(i);
            if (started != IDLE) {
                longest = Math.max(longest, now - started);
            }
        }
        return Duration.ofNanos(longest);
    }

    public SubscriptionSpec spec() {
        return spec;
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

    /** Concurrency 1: the handler runs on this thread, so one message is out at a time without a permit. */
    private void receiveAndHandleInline() throws PulsarClientException {
        while (!stopping) {
            // A bounded wait, so a stop is noticed within RECEIVE_POLL_MILLIS.
            Message<?> message = consumer.receive(RECEIVE_POLL_MILLIS, TimeUnit.MILLISECONDS);
            if (message != null) {
                process(message, time.nanoTime(), 0);
            }
        }
    }

    /** Concurrency above 1: a message is taken only when a permit says a call may start. */
    private void receiveAndHandOff() throws PulsarClientException, InterruptedException {
        while (!stopping) {
            // Bounded, like the receive: with every permit out, a stop is still noticed.
            if (!permits.tryAcquire(RECEIVE_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
                continue;
            }
            Message<?> message;
            try {
                message = consumer.receive(RECEIVE_POLL_MILLIS, TimeUnit.MILLISECONDS);
            } catch (PulsarClientException e) {
                permits.release();
                throw e;
            }
            if (message == null) {
                permits.release();
                continue;
            }
            long received = time.nanoTime();
            pool.execute(orderingKey(message), slot -> {
                try {
                    process(message, received, slot);
                } finally {
                    permits.release();
                }
            });
        }
    }

    /** Runs the handler for one message and settles it. */
    void process(Message<?> message, long receivedNanos, int slot) {
        if (stopping) {
            // Not started before the stop: left unacknowledged, the broker gives it to another consumer.
            return;
        }
        DuplicateGuard.Verdict verdict = duplicates.admit(message);
        if (verdict != DuplicateGuard.Verdict.HANDLE) {
            skipRepeat(message, verdict, receivedNanos);
            return;
        }
        int attempt = message.getRedeliveryCount() + 1;
        Received<Message<?>> received =
                new Received<>(message, message.getMessageId(), attempt, isBatched(message), receivedNanos);
        metrics.delivered(attempt, Math.max(0, System.currentTimeMillis() - message.getPublishTime()));
        metrics.inFlightChanged(1);
        long started = time.nanoTime();
        callStarts.set(slot, started);
        Settled how = null;
        try {
            Outcome outcome = handler.handle(message);
            how = settlement.apply(received, outcome);
        } catch (PayloadDecodeException e) {
            failures.failed("decoding the payload", attempt, e);
            how = settlement.failed(received);
        } catch (VirtualMachineError e) {
            // Out of memory and the like: this process cannot be trusted to go on. The owner stops the runtime;
            // the message stays unacknowledged and comes back once the consumer is gone.
            loopFailure = e;
            fatal.complete(e);
            throw e;
        } catch (Throwable e) {
            // A handler's bug, whatever it throws (an AssertionError, a missing class), is a failed attempt.
            failures.failed("handler " + handler + " on message " + message.getMessageId(), attempt, e);
            how = settlement.failed(received);
        } finally {
            callStarts.set(slot, IDLE);
            metrics.inFlightChanged(-1);
            duplicates.finished(message, how == Settled.ACK || how == Settled.DROP);
        }
        metrics.settled(how, time.nanoTime() - started);
        if (log.isDebugEnabled()) {
            log.debug(
                    "subscription '{}': message {}{} attempt {}{}: {}",
                    spec.name(),
                    message.getMessageId(),
                    message.hasKey() ? " (key " + message.getKey() + ")" : "",
                    attempt,
                    spec.deadLetter().map(dlq -> " of " + dlq.maxAttempts()).orElse(""),
                    how.label());
        }
    }

    private static boolean isBatched(Message<?> message) {
        return message.getMessageId() instanceof MessageIdAdv id && id.getBatchSize() > 1;
    }

    /** A second copy of a delivery this driver has in hand or has acknowledged: the handler never sees it. */
    private void skipRepeat(Message<?> message, DuplicateGuard.Verdict verdict, long receivedNanos) {
        int attempt = message.getRedeliveryCount() + 1;
        if (verdict == DuplicateGuard.Verdict.ACKED) {
            settlement.apply(
                    new Received<>(message, message.getMessageId(), attempt, isBatched(message), receivedNanos),
                    Outcome.ack());
        }
        log.debug(
                "subscription '{}': message {} attempt {} arrived again ({}); not handed to the handler twice",
                spec.name(),
                message.getMessageId(),
                attempt,
                verdict);
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
        long deadline = System.nanoTime() + grace.toNanos();
        stopping = true;
        try {
            // Inline, the receive thread is the one handler call: joining it waits for that call.
            receiver.join(Math.max(1, grace.toMillis()));
            boolean drained = pool == null
                    ? !receiver.isAlive()
                    : permits.tryAcquire(
                            spec.concurrency(), Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (!drained) {
                log.warn(
                        "subscription '{}': handler calls still running after the {} grace; their messages stay"
                                + " unacknowledged and will be delivered again",
                        spec.name(),
                        DurationText.format(grace));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (pool != null) {
            pool.shutdownNow();
        }
        int abandoned = settlement.abandonHeld();
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
        log.info(
                "subscription '{}' stopped: {} held retries abandoned (they stay unacknowledged and come back)",
                spec.name(),
                abandoned);
    }
}
