package dev.settle.test;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deadletter.DelayCopy;
import dev.settle.runtime.driver.ConsumerCalls;
import dev.settle.runtime.driver.DeadLetterWriter;
import dev.settle.runtime.driver.DetachedDriver;
import dev.settle.runtime.driver.DriverMetrics;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.OnCap;
import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.driver.SubscriptionServices;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.internal.DefaultImplementation;

/**
 * One subscription's broker and consumer, simulated: what Pulsar 4.2.4 does with the consumer calls the runtime
 * makes (docs/design.md, "The settlement contract"; measured in docs/pulsar-client-notes.md), and nothing of the
 * runtime's own rules, which {@link DetachedDriver} runs.
 *
 * <ul>
 *   <li>Messages are handed out in the order they were published; a redelivered copy joins the end of the queue.
 *   <li>Shared and Key_Shared: a negative acknowledgement or an ack timeout brings back that message alone, its
 *       redelivery count + 1; a copy whose count has reached {@code maxRedeliverCount} goes to the dead-letter
 *       topic instead (with the client's REAL_TOPIC, REAL_SUBSCRIPTION, ORIGIN_MESSAGE_ID and
 *       ORIGIN_MESSAGE_IDY_TIME) and is acknowledged: what happens after an ack timeout on the last attempt. A last
 *       attempt that failed is dead-lettered by the runtime's own rules instead ({@link #write}), with Settle's
 *       properties, and then acknowledged.
 *   <li>Exclusive and Failover: no count (always 0), and any negative acknowledgement or ack timeout rewinds the
 *       subscription: every unacknowledged message comes back, in publish order.
 *   <li>The ack timeout runs from when the consumer hands a copy out; acknowledging or negatively acknowledging it
 *       stops it. It fires exactly at the timeout (the real client's tick adds up to one second).
 *   <li>At most {@code concurrency} copies are out at once and not yet settled, as the driver's permits allow.
 * </ul>
 *
 * Thread-safe: the consumer calls come from handler threads and from the clock.
 */
final class SimulatedSubscription implements ConsumerCalls<Message<?>>, DeadLetterWriter<Message<?>> {
    /** Past this many deliveries with the clock standing still, a handler is retrying at once for ever. */
    static final int DELIVERIES_WITHOUT_TIME_PASSING = 10_000;

    /** Publishes a dead letter to its topic (and so to whichever simulated subscriptions consume it). */
    interface DeadLetterSink {
        /** @return the dead letter as published, with its id on the dead-letter topic */
        SimulatedMessage publish(String topic, SimulatedMessage original, Map<String, String> properties);
    }

    private static final class Entry {
        final SimulatedMessage message;
        int redeliveryCount;

        Entry(SimulatedMessage message) {
            this.message = message;
        }
    }

    /** One copy handed out, watched by the ack timeout until it is settled. */
    private static final class Lease {
        boolean active = true;
    }

    private final SubscriptionSpec spec;
    private final HandlerPort port;
    private final Schema<?> readerSchema;
    private final KitClock clock;
    private final DeadLetterSink deadLetters;
    private final DetachedDriver driver;
    /** The first fatal error a call hit; guarded by {@code lock}. */
    private VirtualMachineError fatal;

    private final Object lock = new Object();
    // Guarded by lock.
    private final ArrayDeque<SimulatedMessage> queue = new ArrayDeque<>();
    private final LinkedHashMap<MessageId, Entry> unacked = new LinkedHashMap<>();
    private final Map<MessageId, Lease> leases = new HashMap<>();
    private int inFlight;
    private final List<Delivered> delivered = new ArrayList<>();
    private final List<ConsumerCall> calls = new ArrayList<>();
    private final List<DeadLetterMessage> deadLettered = new ArrayList<>();
    /** Whether the outage circuit breaker paused receiving: no new message is handed out. */
    private boolean paused;
    /** Messages the breaker hands out again (a probe, or the held ones when it closes), before anything else. */
    private final ArrayDeque<DetachedDriver.Released> redrives = new ArrayDeque<>();

    SimulatedSubscription(
            SubscriptionSpec spec,
            HandlerPort port,
            KitClock clock,
            DriverMetrics metrics,
            DeadLetterSink deadLetters) {
        this.spec = spec;
        this.port = port;
        this.readerSchema = port.schema();
        this.clock = clock;
        this.deadLetters = deadLetters;
        this.driver = new DetachedDriver(
                spec,
                port,
                new SubscriptionServices(
                        this,
                        this,
                        clock,
                        metrics,
                        clock::wallMillis,
                        this::fatal,
                        OnCap.deadLetter(),
                        // durableDelays: the delay topic on the kit's clock (null keeps every wait in memory).
                        spec.retries().durableDelays().isPresent() ? this::delayCopy : null),
                // The breaker runs on the kit's clock: pausing stops handing out new messages (docs/testing.md).
                Optional.of(new DetachedDriver.Receiving() {
                    @Override
                    public void pause() {
                        synchronized (lock) {
                            paused = true;
                        }
                    }

                    @Override
                    public void resume() {
                        synchronized (lock) {
                            paused = false;
                            lock.notifyAll();
                        }
                    }

                    @Override
                    public void redrive(Message<?> message, long receivedNanos) {
                        synchronized (lock) {
                            redrives.add(new DetachedDriver.Released(message, receivedNanos));
                            lock.notifyAll();
                        }
                    }
                }));
    }

    SubscriptionSpec spec() {
        return spec;
    }

    Schema<?> readerSchema() {
        return readerSchema;
    }

    /** Whether this subscription consumes {@code topic}. */
    boolean consumes(String topic) {
        // Names written in code may be short ("orders"); the manifest's are always qualified.
        return spec.topics().names().stream().map(TestMessage::qualified).anyMatch(topic::equals)
                || spec.topics().pattern().map(topic::matches).orElse(false);
    }

    String breakerState() {
        return driver.breakerState();
    }

    String breakerReason() {
        return driver.breakerReason();
    }

    int heldForOutage() {
        return driver.heldForOutage();
    }

    /** A message published to a topic this subscription consumes. */
    void published(SimulatedMessage message) {
        SimulatedMessage copy = message.readWith(readerSchema);
        synchronized (lock) {
            unacked.put(copy.getMessageId(), new Entry(copy));
            queue.add(copy);
        }
    }

    /**
     * Hands out every message the consumer can take now and runs the handler on each, until nothing is in flight
     * and nothing more can be taken without the clock moving. Only the test's thread calls it.
     */
    void pump() {
        int handed = 0;
        // A batch handler's deliveries each hold a permit while their batch gathers, as in the driver.
        int permits = spec.concurrency() * port.deliveriesPerCall();
        boolean batches = port.deliveriesPerCall() > 1;
        while (true) {
            SimulatedMessage next;
            DetachedDriver.Released released = null;
            synchronized (lock) {
                while (true) {
                    // A message held behind its key and let go comes before new ones, as in the driver's receiver.
                    // Given back by the breaker first: it was received before anything waiting now.
                    released =
                            inFlight < permits ? (redrives.isEmpty() ? driver.nextReleased() : redrives.poll()) : null;
                    if (released != null) {
                        next = null;
                        inFlight++;
                        break;
                    }
                    next = inFlight < permits && !paused ? take() : null;
                    if (next != null) {
                        inFlight++;
                        break;
                    }
                    if (fatal != null) {
                        // As at concurrency 1, where it is thrown on this thread by the call itself.
                        throw fatal;
                    }
                    // Nothing runs and the open batch waits for its maxWait: only the clock moving calls it.
                    if (inFlight == 0 || (batches && inFlight == port.waitingForCall())) {
                        return;
                    }
                    try {
                        // A batch handler's delivery joins its batch on a pool thread (concurrency above 1), which
                        // tells no one: look again within 10 ms.
                        lock.wait(batches ? 10 : 0);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted while handler calls were running", e);
                    }
                }
            }
            if (released != null) {
                SimulatedMessage again = (SimulatedMessage) released.message();
                long receivedNanos = released.receivedNanos();
                driver.submitReleased(released, how -> finished(again, receivedNanos, how));
                continue;
            }
            if (++handed > DELIVERIES_WITHOUT_TIME_PASSING) {
                synchronized (lock) {
                    // Not handed over after all: nothing is left waiting for it.
                    inFlight--;
                    lock.notifyAll();
                }
                throw new IllegalStateException("subscription '" + spec.name() + "': " + DELIVERIES_WITHOUT_TIME_PASSING
                        + " deliveries without the clock moving; the handler retries at once for ever (last: "
                        + next + "). A " + spec.type().manifestName() + " subscription "
                        + (spec.deadLetter().isPresent()
                                ? "caps attempts only as far as maxAttempts"
                                : "without maxAttempts and deadLetterTopic retries for ever")
                        + ", as Pulsar would");
            }
            SimulatedMessage message = next;
            long receivedNanos = clock.nanoTime();
            driver.submit(message, receivedNanos, how -> finished(message, receivedNanos, how));
        }
    }

    /**
     * A call hit a {@link VirtualMachineError} (a function's {@code context.fatal}) on a pool thread: the test's
     * thread throws it at once, as the runtime stops on it; its message stays unacknowledged.
     */
    private void fatal(VirtualMachineError error) {
        synchronized (lock) {
            if (fatal == null) {
                fatal = error;
            }
            lock.notifyAll();
        }
    }

    /** The next copy to hand out, with its ack timeout started; null when there is none. */
    private SimulatedMessage take() {
        while (true) {
            SimulatedMessage next = queue.poll();
            if (next == null) {
                return null;
            }
            if (!unacked.containsKey(next.getMessageId())) {
                // Settled since it was queued: the real consumer would hand it over and the driver's duplicate guard
                // acknowledge it again, unseen by the handler.
                continue;
            }
            Lease lease = new Lease();
            leases.put(next.getMessageId(), lease);
            spec.consumer().ackTimeout().ifPresent(timeout -> clock.schedule(timeout, () -> ackTimedOut(next, lease)));
            return next;
        }
    }

    private void finished(SimulatedMessage message, long receivedNanos, Optional<Settled> how) {
        synchronized (lock) {
            how.ifPresent(outcome -> delivered.add(new Delivered(
                    spec.name(),
                    message.getTopicName(),
                    message.getMessageId().toString(),
                    Optional.ofNullable(message.getKey()),
                    Payloads.decode(readerSchema, message.getData()),
                    attempt(message),
                    outcome,
                    clock.sinceStart(receivedNanos))));
            inFlight--;
            lock.notifyAll();
        }
    }

    @Override
    public CompletionStage<Void> acknowledge(Message<?> message) {
        synchronized (lock) {
            call(message, ConsumerCall.Kind.ACKNOWLEDGE);
            settle(message.getMessageId());
            unacked.remove(message.getMessageId());
        }
        // The simulated broker takes an acknowledgement at once.
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void negativeAcknowledge(Message<?> message) {
        List<Runnable> after = new ArrayList<>();
        synchronized (lock) {
            call(message, ConsumerCall.Kind.NEGATIVE_ACKNOWLEDGE);
            settle(message.getMessageId());
            redeliver(message, after);
        }
        after.forEach(Runnable::run);
    }

    private void ackTimedOut(SimulatedMessage copy, Lease lease) {
        List<Runnable> after = new ArrayList<>();
        synchronized (lock) {
            if (!lease.active || leases.get(copy.getMessageId()) != lease) {
                return;
            }
            call(copy, ConsumerCall.Kind.ACK_TIMEOUT);
            settle(copy.getMessageId());
            redeliver(copy, after);
        }
        after.forEach(Runnable::run);
    }

    /** The copy is settled: its ack timeout stops. */
    private void settle(MessageId id) {
        Lease lease = leases.remove(id);
        if (lease != null) {
            lease.active = false;
        }
    }

    /** The client asks for {@code copy} again: Shared counts it (or dead-letters it), Exclusive rewinds. */
    private void redeliver(Message<?> copy, List<Runnable> after) {
        if (!spec.type().countsRedeliveries()) {
            // The client cannot redeliver one message on these types: it asks for every unacknowledged one.
            rewind();
            return;
        }
        Entry entry = unacked.get(copy.getMessageId());
        if (entry == null) {
            // Acknowledged meanwhile: the broker has nothing to send again.
            return;
        }
        Optional<DeadLetter> deadLetter = spec.deadLetter();
        if (deadLetter.isPresent()
                && copy.getRedeliveryCount() >= deadLetter.get().maxRedeliverCount()) {
            unacked.remove(copy.getMessageId());
            call(copy, ConsumerCall.Kind.DEAD_LETTERED);
            Map<String, String> properties = new LinkedHashMap<>(entry.message.getProperties());
            properties.putIfAbsent(DeadLetterMessage.REAL_TOPIC, entry.message.getTopicName());
            properties.putIfAbsent(DeadLetterMessage.REAL_SUBSCRIPTION, spec.name());
            String origin = entry.message.getMessageId().toString();
            properties.putIfAbsent(DeadLetterMessage.ORIGIN_MESSAGE_ID, origin);
            properties.putIfAbsent(DeadLetterMessage.ORIGIN_MESSAGE_ID_AS_SPELT_BY_THE_CLIENT, origin);
            String topic = deadLetter.get().topic();
            after.add(() -> {
                SimulatedMessage published = deadLetters.publish(topic, entry.message, properties);
                recordDeadLetter(new DeadLetterMessage(
                        topic,
                        published.getMessageId().toString(),
                        published.getData(),
                        Optional.ofNullable(published.getKey()),
                        published.getProperties()));
            });
            return;
        }
        entry.redeliveryCount++;
        queue.add(entry.message.withRedeliveryCount(entry.redeliveryCount));
    }

    /** Copies on the simulated delay topic, numbered apart from every published message's id. */
    private static final long DELAY_LEDGER = -44;

    private long delayEntries;

    /**
     * A wait kept on the delay topic ({@code durableDelays: true}): the copy is stored at once and delivered to this
     * subscription when the kit's clock reaches {@code deliverAtMillis}, as the broker's delayed delivery does (without
     * its tick: never early).
     */
    private CompletionStage<?> delayCopy(UnitOfWork<Message<?>> work, Map<String, String> properties, long deliverAt) {
        SimulatedMessage original = (SimulatedMessage) work.message();
        String topic = spec.retries().durableDelays().orElseThrow().topic();
        MessageId id;
        synchronized (lock) {
            id = DefaultImplementation.getDefaultImplementation().newMessageId(DELAY_LEDGER, delayEntries++, -1);
        }
        SimulatedMessage copy = original.copyTo(topic, id, properties, clock.wallMillis());
        clock.schedule(Duration.ofMillis(Math.max(0, deliverAt - clock.wallMillis())), () -> published(copy));
        return CompletableFuture.completedFuture(id);
    }

    /** The attempt {@code message} was handled on: a delay copy's carries the attempts made before it. */
    private int attempt(SimulatedMessage message) {
        return spec.retries()
                        .durableDelays()
                        .map(delays -> delays.topic().equals(message.getTopicName()))
                        .orElse(false)
                ? DelayCopy.attempt(message.getProperties(), message.getRedeliveryCount())
                : message.getRedeliveryCount() + 1;
    }

    /** Settle's dead letter, as the runtime writes it: stored at once on the simulated topic. */
    @Override
    public CompletionStage<?> write(UnitOfWork<Message<?>> work, Map<String, String> settleProperties) {
        SimulatedMessage copy = (SimulatedMessage) work.message();
        Map<String, String> properties = DeadLetterProperties.letter(
                copy.getProperties(),
                copy.getTopicName(),
                spec.name(),
                copy.getMessageId().toString(),
                settleProperties);
        String topic = spec.deadLetter().orElseThrow().topic();
        synchronized (lock) {
            call(copy, ConsumerCall.Kind.DEAD_LETTERED);
        }
        SimulatedMessage published = deadLetters.publish(topic, copy, properties);
        recordDeadLetter(new DeadLetterMessage(
                topic,
                published.getMessageId().toString(),
                published.getData(),
                Optional.ofNullable(published.getKey()),
                published.getProperties()));
        return CompletableFuture.completedFuture(null);
    }

    /** Every unacknowledged message comes back, in publish order, its count unchanged. */
    private void rewind() {
        queue.clear();
        leases.values().forEach(lease -> lease.active = false);
        leases.clear();
        for (Entry entry : unacked.values()) {
            queue.add(entry.message.withRedeliveryCount(entry.redeliveryCount));
        }
    }

    private void call(Message<?> copy, ConsumerCall.Kind kind) {
        calls.add(new ConsumerCall(
                spec.name(), copy.getMessageId().toString(), copy.getRedeliveryCount() + 1, kind, clock.elapsed()));
    }

    private void recordDeadLetter(DeadLetterMessage message) {
        synchronized (lock) {
            deadLettered.add(message);
        }
    }

    List<Delivered> deliveries() {
        synchronized (lock) {
            return List.copyOf(delivered);
        }
    }

    List<ConsumerCall> calls() {
        synchronized (lock) {
            return List.copyOf(calls);
        }
    }

    List<DeadLetterMessage> deadLetters() {
        synchronized (lock) {
            return List.copyOf(deadLettered);
        }
    }

    /** Messages not yet acknowledged: queued, being handled, held or left without an outcome. */
    int unacknowledged() {
        synchronized (lock) {
            return unacked.size();
        }
    }

    HandlerPort port() {
        return port;
    }

    /**
     * The deadline of this subscription's handler call on {@code thread}, on the kit's clock ({@link Long#MAX_VALUE}
     * for none, or given up already); empty when none of its calls runs there.
     */
    OptionalLong callDeadline(Thread thread) {
        return driver.callDeadline(thread);
    }

    /** Gives up every call past its deadline, settled as a {@code timeout} failure; how many were. */
    int expireOverdue() {
        return driver.expireOverdue();
    }

    /** Stops as the runtime does: held waits abandoned (their messages stay unacknowledged), the pool stopped. */
    void close() {
        driver.abandonHeld();
        driver.close();
    }

    @Override
    public String toString() {
        return "subscription '" + spec.name() + "'";
    }
}
