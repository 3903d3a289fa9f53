package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.BatchLimits;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A batch handler behind the driver's port of one delivery (issue 47): each delivery the driver hands over joins the
 * open batch and gets a pending outcome; the batch is called once it holds {@code maxMessages}, once the next payload
 * would take it past {@code maxBytes} (a larger one goes alone), or {@code maxWait} after its first delivery. The call
 * runs on one of {@code concurrency} threads of its own, so {@code concurrency} counts batches in flight; a call that
 * throws is split by {@link Bisection}. Each delivery's outcome then completes on that thread, and the driver settles
 * it as it settles any pending outcome: its own attempt count, cap and dead letter ({@link Processing}).
 *
 * <p>Key order: the driver hands over a key's deliveries in order, and they join the open batch in that order. Once a
 * batch holding a key is called, the key's next deliveries wait here until every delivery of that key in called
 * batches is settled, then join the open batch in order: a later batch holds none of a key while an earlier delivery
 * of it is unsettled. Thread-safe.
 */
final class BatchGathering implements HandlerPort {
    private static final Logger log = LoggerFactory.getLogger(BatchGathering.class);
    /** How long an idle call thread stays: a stopped subscription's threads end by themselves. */
    private static final long IDLE_THREAD_SECONDS = 30;

    private final String subscription;
    private final BatchLimits limits;
    private final BatchPort port;
    private final Time time;
    private final DriverMetrics metrics;
    private final Executor calls;
    /** Logged once per subscription: a result that leaves deliveries out usually does so on every call. */
    private final AtomicBoolean missingLogged = new AtomicBoolean();

    private final Bisection.Observer observer;
    /**
     * {@link #toString()}, made once: the journal and tracing name the code of each settlement by it, so a string built
     * per call cost every settled message its making, and the journal its lookup as a new text (docs/trace.md).
     */
    private final String description;
    /** The code's name in logs, traces and the journal: the port's, or the generation of live code it runs. */
    private final String code;

    private final Object lock = new Object();
    /** The batch deliveries join; null when none is open. Guarded by {@link #lock}. */
    private Batch open;
    /** Per key, its deliveries in called batches not yet settled. Guarded by {@link #lock}. */
    private final Map<String, Integer> called = new HashMap<>();
    /** Per key in {@link #called}, its deliveries waiting to join a batch, in order. Guarded by {@link #lock}. */
    private final Map<String, ArrayDeque<Member>> held = new HashMap<>();

    /** A delivery in a batch: its ordering key (or null), its payload size, and the outcome the driver waits for. */
    private record Member(UnitOfWork<Message<?>> work, String key, long bytes, CompletableFuture<Outcome> outcome) {}

    private static final class Batch {
        final List<Member> members = new ArrayList<>();
        long bytes;
        Time.Scheduled maxWait;
    }

    BatchGathering(
            String subscription, BatchLimits limits, BatchPort port, Executor calls, Time time, DriverMetrics metrics) {
        this(subscription, limits, port, calls, time, metrics, port.toString());
    }

    private BatchGathering(
            String subscription,
            BatchLimits limits,
            BatchPort port,
            Executor calls,
            Time time,
            DriverMetrics metrics,
            String code) {
        this.subscription = subscription;
        this.limits = limits;
        this.port = port;
        this.calls = calls;
        this.time = time;
        this.metrics = metrics;
        this.description = "batches of up to " + limits.maxMessages() + " messages, " + limits.maxBytes() + " bytes, "
                + DurationText.format(limits.maxWait()) + ": " + code;
        this.code = code;
        this.observer = new Bisection.Observer() {
            @Override
            public void called(int size) {
                metrics.batchCalled(size);
            }

            @Override
            public void split(int size) {
                metrics.batchSplit(size);
            }
        };
    }

    /**
     * This gathering with its code named {@code name} (live code names the generation it runs), made before its first
     * delivery: the same pool, nothing in flight.
     */
    @Override
    public BatchGathering named(String name) {
        return new BatchGathering(subscription, limits, port, calls, time, metrics, name);
    }

    /**
     * Why the swap refuses to change between a batch handler and a handler of one message: the driver sizes its
     * permits (concurrency x maxMessages deliveries in flight) and its key ordering for one shape when its consumer
     * starts.
     */
    static final String SHAPE_FIXED_AT_START = "the driver sizes its deliveries in flight (concurrency x"
            + " batch.maxMessages) and its key ordering for one shape when its consumer starts, so a swap keeps the"
            + " shape. Swap in code of the running shape (a BatchHandler for a BatchHandler, a Handler for a Handler),"
            + " or change the manifest's jar and restart the runtime to run the other shape";

    /**
     * The gathering of {@code next}, a batch handler swapped in for this one's: its clock and metrics, a pool of its
     * own. Nothing of this gathering moves over: its open batch and held deliveries are called here, on the old
     * generation, and the swap waits for their permits.
     */
    BatchGathering next(SubscriptionSpec spec, BatchPort next) {
        return of(spec, next, time, metrics);
    }

    /**
     * The port of a batch handler for {@code spec}'s subscription, gathering up to its {@code batch:} limits, its calls
     * on {@code concurrency} threads of their own.
     */
    static BatchGathering of(SubscriptionSpec spec, BatchPort port, Time time, DriverMetrics metrics) {
        AtomicInteger threads = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(
                spec.concurrency(),
                spec.concurrency(),
                IDLE_THREAD_SECONDS,
                TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(),
                runnable -> {
                    Thread thread =
                            new Thread(runnable, "settle-" + spec.name() + "-batch-" + threads.getAndIncrement());
                    thread.setDaemon(true);
                    return thread;
                });
        pool.allowCoreThreadTimeOut(true);
        return new BatchGathering(spec.name(), spec.batchLimits(), port, pool, time, metrics);
    }

    @Override
    public Schema<?> schema() {
        return port.schema();
    }

    @Override
    public int deliveriesPerCall() {
        return limits.maxMessages();
    }

    @Override
    public int waitingForCall() {
        synchronized (lock) {
            return open == null ? 0 : open.members.size();
        }
    }

    @Override
    public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
        Message<?> message = work.message();
        Member member =
                new Member(work, SubscriptionDriver.orderingKey(message), message.size(), new CompletableFuture<>());
        synchronized (lock) {
            if (member.key() != null && called.containsKey(member.key())) {
                held.computeIfAbsent(member.key(), key -> new ArrayDeque<>()).add(member);
            } else {
                join(member);
            }
        }
        return member.outcome();
    }

    /** Adds {@code member} to the open batch, calling the batch when a limit is reached. Holds {@link #lock}. */
    private void join(Member member) {
        if (open != null && open.bytes + member.bytes() > limits.maxBytes()) {
            close();
        }
        if (open == null) {
            Batch batch = new Batch();
            open = batch;
            if (!limits.maxWait().isZero()) {
                batch.maxWait = time.schedule(limits.maxWait(), () -> expire(batch));
            }
        }
        open.members.add(member);
        open.bytes += member.bytes();
        if (open.members.size() >= limits.maxMessages()
                || open.bytes >= limits.maxBytes()
                || limits.maxWait().isZero()) {
            close();
        }
    }

    private void expire(Batch batch) {
        synchronized (lock) {
            if (open == batch) {
                close();
            }
        }
    }

    /** Calls the open batch: its keys are busy until it is settled. Holds {@link #lock}. */
    private void close() {
        Batch batch = open;
        open = null;
        if (batch.maxWait != null) {
            batch.maxWait.cancel();
        }
        for (Member member : batch.members) {
            if (member.key() != null) {
                called.merge(member.key(), 1, Integer::sum);
            }
        }
        calls.execute(() -> call(batch.members));
    }

    /** Calls the handler for {@code members} (split as it takes), completes each outcome, then frees their keys. */
    private void call(List<Member> members) {
        List<UnitOfWork<Message<?>>> works = new ArrayList<>(members.size());
        for (Member member : members) {
            works.add(member.work());
        }
        try {
            List<BatchAnswer> answers = Bisection.answers(works, this::traced, observer);
            for (int i = 0; i < members.size(); i++) {
                complete(members.get(i), answers.get(i));
            }
        } catch (Throwable fatalOrBug) {
            // Out of memory and the like, or a bug past the port: the driver's settlement decides (a fatal error
            // stops the runtime); each delivery is told, so none keeps its permit.
            for (Member member : members) {
                member.outcome().completeExceptionally(fatalOrBug);
            }
        } finally {
            settled(members);
        }
    }

    /** One call of the port, in a span of its own linked to its deliveries' spans when they are traced. */
    private List<BatchAnswer> traced(List<UnitOfWork<Message<?>>> batch) throws Exception {
        // Tracing is on for every delivery of a subscription or for none: the first one's span says which.
        Tracing.Handling first = batch.get(0).trace();
        if (first == null) {
            return port.call(batch);
        }
        List<Tracing.Handling> members = new ArrayList<>(batch.size());
        for (UnitOfWork<Message<?>> work : batch) {
            members.add(work.trace());
        }
        Tracing.Call span = first.batchCall(subscription, code, members);
        List<BatchAnswer> answers;
        try {
            answers = port.call(batch);
        } catch (Exception | Error thrown) {
            span.end(PrintableThrowable.of(thrown));
            throw thrown;
        }
        span.end(null);
        return answers;
    }

    private void complete(Member member, BatchAnswer answer) {
        if (answer.failure() != null) {
            member.outcome().completeExceptionally(answer.failure());
            return;
        }
        if (answer.missing()) {
            metrics.batchOutcomeMissing();
            if (missingLogged.compareAndSet(false, true)) {
                log.warn(
                        "subscription '{}': batch handler {} gave no outcome for message {}: it is left unacknowledged"
                                + " and comes back after the ack timeout (or once the consumer disconnects). Logged"
                                + " once; every such message is counted in settle_batch_outcomes_missing_total",
                        subscription,
                        port,
                        member.work().id());
            }
        }
        // Settled here, on this thread, by the driver's callback on the pending outcome.
        member.outcome().complete(answer.outcome());
    }

    /** The members' keys are free of called batches once their last delivery there is settled. */
    private void settled(List<Member> members) {
        synchronized (lock) {
            for (Member member : members) {
                String key = member.key();
                if (key != null && called.merge(key, -1, Integer::sum) == 0) {
                    called.remove(key);
                    release(key);
                }
            }
        }
    }

    /**
     * The deliveries of {@code key} that waited join the open batch, in order, until one of them closes it (the key is
     * then in a called batch again). Holds {@link #lock}.
     */
    private void release(String key) {
        ArrayDeque<Member> waiting = held.get(key);
        if (waiting == null) {
            return;
        }
        while (!waiting.isEmpty() && !called.containsKey(key)) {
            join(waiting.poll());
        }
        if (waiting.isEmpty()) {
            held.remove(key);
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
