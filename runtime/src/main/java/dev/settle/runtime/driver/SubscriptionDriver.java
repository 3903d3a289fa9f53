package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
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
 * otherwise on a pool of {@code concurrency} threads fed by a {@link KeyOrderedExecutor}. Either way a semaphore
 * of {@code concurrency} permits bounds the messages taken from the consumer and not yet settled: an outcome
 * that completes later (a function's output being published) keeps its permit until it is settled, on the thread
 * that completes it. Same-key order is the order of handler calls; their settlements may complete out of order.
 */
public final class SubscriptionDriver {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionDriver.class);
    private static final int RECEIVE_POLL_MILLIS = 100;
    private static final long IDLE = Long.MIN_VALUE;

    private final SubscriptionSpec spec;
    private final Subscriber subscriber;
    private final PulsarConsumerCalls calls;
    private final HandlerPort handler;
    private final DriverMetrics metrics;
    private final Time time;
    private final Processing processing;
    private final Semaphore permits;
    private final KeyOrderedExecutor pool;
    private final Thread receiver;
    /** Per calling thread: when its current handler call started (nanoTime), or {@link #IDLE}. */
    private final AtomicLongArray callStarts;
    /** Deliveries whose outcome is still pending after the call returned, with when their call started. */
    private final Map<Object, Long> pendingSince = new ConcurrentHashMap<>();

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
        this.processing = new Processing(spec, handler, calls, time, metrics, System::currentTimeMillis, this::fatal);
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

    /**
     * How long the longest handler call now running has been running, a delivery waiting for its outcome counted
     * from its call's start; zero when none runs.
     */
    public Duration longestRunningCall() {
        long now = time.nanoTime();
        long longest = 0;
        for (int i = 0; i < callStarts.length(); i++) {
            long started = callStarts.get(i);
            if (started != IDLE) {
                longest = Math.max(longest, now - started);
            }
        }
        // An outcome that never completes (a function's future, an output never stored) holds its permit: it counts
        // as a call running as long, so handlerTimeout catches it.
        for (long started : pendingSince.values()) {
            longest = Math.max(longest, now - started);
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

    /**
     * Concurrency 1: the handler runs on this thread (no hand-off per message). The one permit is taken before a
     * message and given back when it is settled, so an outcome that completes later (an output being published)
     * keeps the next message waiting without blocking this thread in the handler.
     */
    private void receiveAndHandleInline() throws PulsarClientException, InterruptedException {
        while (!stopping) {
            Message<?> message = receiveWithPermit();
            if (message != null) {
                process(message, time.nanoTime(), 0);
            }
        }
    }

    /**
     * Takes a permit, then a message: null (and no permit held) when either did not come within
     * {@link #RECEIVE_POLL_MILLIS}, so a stop is noticed even with every permit out.
     */
    private Message<?> receiveWithPermit() throws PulsarClientException, InterruptedException {
        if (!permits.tryAcquire(RECEIVE_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
            return null;
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
        }
        return message;
    }

    /** Concurrency above 1: a message is taken only when a permit says a call may start. */
    private void receiveAndHandOff() throws PulsarClientException, InterruptedException {
        while (!stopping) {
            Message<?> message = receiveWithPermit();
            if (message == null) {
                continue;
            }
            long received = time.nanoTime();
            pool.execute(orderingKey(message), slot -> process(message, received, slot));
        }
    }

    /**
     * Runs the handler for one message and settles it, now or when its outcome completes; gives the message's
     * permit back once it is settled (or left alone), exactly once.
     */
    void process(Message<?> message, long receivedNanos, int slot) {
        if (stopping) {
            // Not started before the stop: left unacknowledged, the broker gives it to another consumer.
            permits.release();
            return;
        }
        processing.process(
                message,
                receivedNanos,
                new Processing.Watch() {
                    @Override
                    public void calling(long startedNanos) {
                        callStarts.set(slot, startedNanos);
                    }

                    @Override
                    public void returned() {
                        callStarts.set(slot, IDLE);
                    }

                    @Override
                    public void pending(Object delivery, long startedNanos) {
                        pendingSince.put(delivery, startedNanos);
                    }

                    @Override
                    public void completed(Object delivery) {
                        pendingSince.remove(delivery);
                    }
                },
                how -> permits.release());
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
        long deadline = System.nanoTime() + grace.toNanos();
        stopping = true;
        try {
            receiver.join(Math.max(1, grace.toMillis()));
            // Every permit back: no call runs and no outcome is pending (an output still being published).
            boolean drained = permits.tryAcquire(
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
        int abandoned = processing.abandonHeld();
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
