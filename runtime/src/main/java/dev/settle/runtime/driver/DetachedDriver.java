package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.pulsar.client.api.Message;

/**
 * One subscription's per-message rules without a Pulsar consumer: the handler call, the duplicate guard, the
 * failure log, {@link Settlement} and the metrics, exactly as {@link SubscriptionDriver} runs them, with the two
 * consumer calls going to whoever hands the messages in. The test kit ({@code dev.settle:settle-test}) runs its
 * simulated broker behind it, so a handler under test is settled by the runtime's own rules, not a copy of them.
 *
 * <p>Both run {@link Processing}, so the per-message rules cannot drift; the kit's fidelity suite runs the same
 * scenarios on both and fails when they differ.
 *
 * <p>Threads: with {@code concurrency} 1 {@link #submit} runs the handler on the calling thread; above it on a pool
 * of {@code concurrency} threads where messages of one key run one after another, as the driver's pool does.
 */
public final class DetachedDriver implements AutoCloseable {
    /** The caller holds no permits: nothing to give back when a call ends. */
    private static final Runnable NOTHING = () -> {};

    private final Processing processing;
    private final KeyOrderedExecutor pool;
    /** The clock the leases run on. */
    private final Time time;
    /**
     * The lease of each call now in the handler, by the thread it runs on: the caller's lease check
     * ({@link #expireOverdue}) gives them up on its clock. A call whose outcome is pending after it returned is not
     * watched: the kit's sends complete at once.
     */
    private final Map<Thread, InFlight> calling = new ConcurrentHashMap<>();

    private final Processing.Watch watch = new Processing.Watch() {
        @Override
        public void leased(InFlight call) {
            calling.put(Thread.currentThread(), call);
        }

        @Override
        public void returned() {
            calling.remove(Thread.currentThread());
        }
    };

    /** A message held behind its key and now let go: {@link #submitReleased} hands it to the handler again. */
    public record Released(Message<?> message, long receivedNanos) {}

    /**
     * @param spec the subscription
     * @param handler the handler, behind the same port the driver uses ({@link SdkHandlerPort})
     * @param consumer receives the acknowledgements and negative acknowledgements
     * @param time the clock and timer every wait runs on (a manual one in the kit)
     * @param metrics what the driver reports to
     * @param wallClockMillis the wall clock the delivery lag is measured on, against each message's publish time
     * @param fatal told of a {@link VirtualMachineError} a call hit (a function's {@code context.fatal} too), on the
     *     thread of the call, before it is thrown there: above concurrency 1 that is a pool thread, so the caller
     *     learns of it only through here
     */
    public DetachedDriver(
            SubscriptionSpec spec,
            HandlerPort handler,
            ConsumerCalls<Message<?>> consumer,
            Time time,
            DriverMetrics metrics,
            LongSupplier wallClockMillis,
            Consumer<VirtualMachineError> fatal) {
        this(spec, handler, new SubscriptionServices(consumer, null, time, metrics, wallClockMillis, fatal));
    }

    /**
     * What the outage circuit breaker pauses, resumes and hands held messages out again through, for a caller that
     * can (the test kit's simulated consumer). Each call is made under the breaker's lock: it must be quick and must
     * not call back into this driver.
     */
    public interface Receiving {
        /** Hands out no new message until {@link #resume}; those given back by {@link #redrive} still go. */
        void pause();

        /** Hands out new messages again. */
        void resume();

        /** Hands {@code message}, first received at {@code receivedNanos}, to {@link #submit} again, before new ones. */
        void redrive(Message<?> message, long receivedNanos);
    }

    /** As the constructor above, connected to {@code services} (with Settle's own dead letters, when they say so). */
    public DetachedDriver(SubscriptionSpec spec, HandlerPort handler, SubscriptionServices services) {
        this(spec, handler, services, Optional.empty());
    }

    /**
     * As above, with the outage circuit breaker running on {@code services}' clock when {@code receiving} is given and
     * the spec has it on (docs/concepts.md, "An outage is not a poison message"); without, every failure is settled
     * by the contract's rules alone, as {@code breaker: {enabled: false}} does.
     */
    public DetachedDriver(
            SubscriptionSpec spec, HandlerPort handler, SubscriptionServices services, Optional<Receiving> receiving) {
        this.processing = new Processing(
                spec,
                Objects.requireNonNull(handler, "handler"),
                services,
                // The caller hands messages in without permits: one may come while the last is unsettled.
                new Processing.Caller(
                        new PendingOutputs(spec.outputs().maxPendingOutputs(), services.time()),
                        true,
                        receiving.map(DetachedDriver::forBreaker)),
                // At-least-once, untraced, unjournaled: the kit tests a handler's outcomes, not the broker's
                // transactions.
                SettlementStrategy.atLeastOnce(),
                Pipeline.Journal.NONE);
        this.time = services.time();
        this.pool = spec.concurrency() > 1
                ? new KeyOrderedExecutor("settle-test-" + spec.name(), spec.concurrency())
                : null;
    }

    /**
     * Runs the handler for one received message on the subscription's pool when its concurrency is above 1
     * (messages of one key in the order submitted), else on this thread, and settles it as the driver does: now,
     * or when its outcome completes. {@code done} is told how it was settled (empty when the duplicate guard kept a
     * repeated copy from the handler, or the message was held behind its key), exactly once, on the thread that settled it.
     *
     * @param receivedNanos when the consumer handed it out, on {@code time}: the ack timeout runs from there
     */
    public void submit(Message<?> message, long receivedNanos, Consumer<Optional<Settled>> done) {
        if (pool == null) {
            processing.process(message, receivedNanos, watch, NOTHING, done);
            return;
        }
        pool.execute(
                SubscriptionDriver.orderingKey(message),
                slot -> processing.process(message, receivedNanos, watch, NOTHING, done));
    }

    /**
     * The next message that was held behind an earlier message of its key (whose retry is now over) and is let go,
     * oldest first; null when none is. The caller submits it with {@link #submitReleased} before any new message, as
     * the driver's receiver does.
     */
    public Released nextReleased() {
        // Key-ordered retries, as the driver runs them (KeyOrderedRetries): none where the spec keeps no order.
        KeyHolds.Parked<Message<?>> next = processing.keyHold().nextReleased();
        return next == null ? null : new Released(next.message(), next.receivedNanos());
    }

    /** As {@link #submit}, for a message {@link #nextReleased} let go. */
    public void submitReleased(Released released, Consumer<Optional<Settled>> done) {
        submit(released.message(), released.receivedNanos(), done);
    }

    /**
     * Abandons every held retryAfter and failure backoff and every message held behind its key, as a stop does;
     * returns how many there were.
     */
    public int abandonHeld() {
        return processing.abandonHeld() + processing.keyHold().abandon().size();
    }

    /**
     * The deadline of the handler call running on {@code thread}, on the driver's clock: {@link Long#MAX_VALUE} when it
     * has none or was given up already; empty when no call of this subscription runs on {@code thread}.
     */
    public OptionalLong callDeadline(Thread thread) {
        InFlight call = calling.get(thread);
        if (call == null) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(call.expired() ? Long.MAX_VALUE : call.deadlineNanos());
    }

    /**
     * The lease check, as the driver's runs it ({@code Leases}) but when the caller moves its clock: every call in the
     * handler past its deadline ({@code handlerTimeout} from its start, or its last {@code extend}) is given up — its
     * thread interrupted, its message settled as a {@code timeout} failure. Returns how many were.
     */
    public int expireOverdue() {
        long now = time.nanoTime();
        int expired = 0;
        for (InFlight call : calling.values()) {
            if (call.expire(now)) {
                processing.timedOut(call);
                expired++;
            }
        }
        return expired;
    }

    /** The outage circuit breaker's state: {@code closed}, {@code open}, {@code half-open}, or {@code off}. */
    public String breakerState() {
        return processing.outage().state();
    }

    /** Why the breaker is in its state; empty when it is off. */
    public String breakerReason() {
        return processing.outage().reason();
    }

    /** Messages the open breaker holds now, spending no attempts. */
    public int heldForOutage() {
        return processing.outage().held();
    }

    private static HeldForOutage.Receiving forBreaker(Receiving receiving) {
        return new HeldForOutage.Receiving() {
            @Override
            public void pause() {
                receiving.pause();
            }

            @Override
            public void resume() {
                receiving.resume();
            }

            @Override
            public void redrive(Message<?> message, long receivedNanos) {
                receiving.redrive(message, receivedNanos);
            }
        };
    }

    /** Stops the pool's threads. */
    @Override
    public void close() {
        if (pool != null) {
            pool.shutdownNow();
        }
    }
}
