package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.pulsar.client.api.Message;

/**
 * One subscription's per-message rules without a Pulsar consumer: the handler call, the duplicate guard, the
 * failure log, {@link Settlement} and the metrics, exactly as {@link SubscriptionDriver} runs them, with the two
 * consumer calls going to whoever hands the messages in. The test kit ({@code dev.settle:settle-test}) runs its
 * simulated broker behind it, so a handler under test is settled by the runtime's own rules, not a copy of them.
 *
 * <p>Keep {@link #process} in step with {@link SubscriptionDriver#process}: the kit's fidelity suite runs the same
 * scenarios on both and fails when they differ.
 *
 * <p>Threads: {@link #process} runs the handler on the calling thread; {@link #submit} on a pool of
 * {@code concurrency} threads where messages of one key run one after another, as the driver's pool does.
 */
public final class DetachedDriver implements AutoCloseable {
    /** A duplicate guard as large as the driver's: a simulated broker never repeats a copy, so size is moot. */
    private static final int DUPLICATES_REMEMBERED = 16_384;

    /** The calls a settlement makes on the consumer, received by the caller's broker. */
    public interface ConsumerCalls {
        void acknowledge(Message<?> message);

        void negativeAcknowledge(Message<?> message);
    }

    private final HandlerPort handler;
    private final DriverMetrics metrics;
    private final Time time;
    private final LongSupplier wallClockMillis;
    private final Settlement<Message<?>> settlement;
    private final FailureLog failures;
    private final DuplicateGuard duplicates = new DuplicateGuard(DUPLICATES_REMEMBERED);
    private final KeyOrderedExecutor pool;

    /**
     * @param spec the subscription
     * @param handler the handler, behind the same port the driver uses ({@link SdkHandlerPort})
     * @param consumer receives the acknowledgements and negative acknowledgements
     * @param time the clock and timer every wait runs on (a manual one in the kit)
     * @param metrics what the driver reports to
     * @param wallClockMillis the wall clock the delivery lag is measured on, against each message's publish time
     */
    public DetachedDriver(
            SubscriptionSpec spec,
            HandlerPort handler,
            ConsumerCalls consumer,
            Time time,
            DriverMetrics metrics,
            LongSupplier wallClockMillis) {
        Objects.requireNonNull(consumer, "consumer");
        this.handler = Objects.requireNonNull(handler, "handler");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.time = Objects.requireNonNull(time, "time");
        this.wallClockMillis = Objects.requireNonNull(wallClockMillis, "wallClockMillis");
        this.settlement = new Settlement<>(
                spec,
                new dev.settle.runtime.driver.ConsumerCalls<>() {
                    @Override
                    public void acknowledge(Message<?> message) {
                        consumer.acknowledge(message);
                    }

                    @Override
                    public void negativeAcknowledge(Message<?> message) {
                        consumer.negativeAcknowledge(message);
                    }
                },
                time,
                metrics);
        this.failures = new FailureLog(spec.name(), time);
        this.pool = spec.concurrency() > 1
                ? new KeyOrderedExecutor("settle-test-" + spec.name(), spec.concurrency())
                : null;
    }

    /**
     * Runs the handler for one received message and settles it, on this thread.
     *
     * @param receivedNanos when the consumer handed it out, on {@code time}: the ack timeout runs from there
     * @return how it was settled; empty when the duplicate guard kept a repeated copy from the handler
     */
    public Optional<Settled> process(Message<?> message, long receivedNanos) {
        DuplicateGuard.Verdict verdict = duplicates.admit(message);
        if (verdict != DuplicateGuard.Verdict.HANDLE) {
            if (verdict == DuplicateGuard.Verdict.ACKED) {
                settlement.apply(received(message, receivedNanos), Outcome.ack());
            }
            return Optional.empty();
        }
        int attempt = message.getRedeliveryCount() + 1;
        Received<Message<?>> received = received(message, receivedNanos);
        metrics.delivered(attempt, Math.max(0, wallClockMillis.getAsLong() - message.getPublishTime()));
        metrics.inFlightChanged(1);
        long started = time.nanoTime();
        Settled how = null;
        try {
            Outcome outcome = handler.handle(message);
            how = settlement.apply(received, outcome);
        } catch (PayloadDecodeException e) {
            failures.failed("decoding the payload", attempt, e);
            how = settlement.failed(received);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            failures.failed("handler " + handler + " on message " + message.getMessageId(), attempt, e);
            how = settlement.failed(received);
        } finally {
            metrics.inFlightChanged(-1);
            duplicates.finished(message, how == Settled.ACK || how == Settled.DROP);
        }
        metrics.settled(how, time.nanoTime() - started);
        return Optional.of(how);
    }

    /**
     * As {@link #process}, on the subscription's pool when its concurrency is above 1 (messages of one key in the
     * order submitted), else on this thread; {@code done} is told the result on the thread that ran it.
     */
    public void submit(Message<?> message, long receivedNanos, Consumer<Optional<Settled>> done) {
        if (pool == null) {
            done.accept(process(message, receivedNanos));
            return;
        }
        pool.execute(SubscriptionDriver.orderingKey(message), slot -> {
            Optional<Settled> how = Optional.empty();
            try {
                how = process(message, receivedNanos);
            } finally {
                // Also when the handler hit a VirtualMachineError, so the caller is not left waiting for it.
                done.accept(how);
            }
        });
    }

    /** Abandons every held retryAfter and failure backoff, as a stop does; returns how many there were. */
    public int abandonHeld() {
        return settlement.abandonHeld();
    }

    /** Stops the pool's threads. */
    @Override
    public void close() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }

    private static Received<Message<?>> received(Message<?> message, long receivedNanos) {
        boolean batched =
                message.getMessageId() instanceof org.apache.pulsar.client.api.MessageIdAdv id && id.getBatchSize() > 1;
        return new Received<>(
                message, message.getMessageId(), message.getRedeliveryCount() + 1, batched, receivedNanos);
    }
}
