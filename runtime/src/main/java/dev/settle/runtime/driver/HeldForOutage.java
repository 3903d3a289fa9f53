package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import org.apache.pulsar.client.api.Message;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the outage circuit breaker ({@link Breaker}) does to one subscription's messages (docs/concepts.md, "An outage
 * is not a poison message"). Open: receiving is paused ({@code consumer.pause()}); a message in hand that fails with a
 * dependency's cause ({@link FailureCauses}), or whose failure backoff ends, is held here unacknowledged and is never
 * negatively acknowledged, since a nack counts on the broker: it spends no attempt. One held message at a time is
 * tried again (a probe), rotating across the held keys, after 100 ms and then twice as long each time up to
 * {@code breaker.maxProbeInterval}; with none held, receiving resumes as the probe. A held message's probe that
 * neither succeeds nor fails by the next probe's turn counts as failed. The probe's failure counts an
 * attempt for that message only (it takes the failure's usual path) and opens the breaker again. A success, or new
 * code going live, closes it: receiving resumes and the held messages are handed to the handler again, oldest first
 * per key, with the attempt they had. Any other failure never opens it and reaches the dead-letter cap as before.
 *
 * <p>{@link BreakerPart#OFF} is the breaker turned off ({@code breaker: {enabled: false}}, or a caller that cannot pause
 * nor hand a message out again, such as a {@link DetachedDriver} given no receiving): every failure takes its usual
 * path. The test kit gives its detached driver one, so the kit runs this on its virtual clock.
 * Thread-safe: every change happens under the breaker's lock, so pauses and resumes are made in the order the states
 * change.
 */
final class HeldForOutage implements Breaker.Listener, BreakerPart {
    private static final Logger log = LoggerFactory.getLogger(HeldForOutage.class);
    /** The first probe's wait, as the default failure backoff's first: an outage of a moment costs a moment. */
    static final Duration FIRST_PROBE = Duration.ofMillis(100);

    /** What the breaker does to the subscription's receiving. Each call must be quick: it is made under a lock. */
    interface Receiving {
        /**
         * Stops handing out the consumer's messages and asking the broker for more ({@code consumer.pause()}); what the
         * broker still dispatches on the permits it has waits in the client's queue, unreceived.
         */
        void pause();

        /** Asks the broker for messages again ({@code consumer.resume()}). */
        void resume();

        /** Hands {@code message}, received at {@code receivedNanos}, to the handler again, as if received now. */
        void redrive(Message<?> message, long receivedNanos);
    }

    private final String subscription;
    private final Breaker breaker;
    private final FailureCauses causes;
    private final Receiving receiving;
    private final Time time;
    private final DriverMetrics metrics;
    private final Duration maxProbeInterval;

    /** Guarded by {@link #breaker}: the held messages by key, keys in the order probes visit them. */
    private final Map<String, ArrayDeque<UnitOfWork<Message<?>>>> held = new LinkedHashMap<>();

    private int heldCount;
    /** Guarded by {@link #breaker}: the message a probe handed out again; null when none is out. */
    private Message<?> probe;

    /**
     * Guarded by {@link #breaker}: probes that failed and wait out their backoff. Each is negatively acknowledged
     * when it ends, open or not: its attempt counts, so a message that fails whatever the dependency does cannot keep
     * the breaker open for ever unseen by the cap.
     */
    private final Set<Message<?>> failedProbes = Collections.newSetFromMap(new IdentityHashMap<>());

    private Duration nextProbe = FIRST_PROBE;
    private Time.Scheduled probeTimer;
    private boolean abandoned;

    private HeldForOutage(SubscriptionSpec spec, Receiving receiving, Time time, DriverMetrics metrics) {
        this.subscription = spec.name();
        this.causes = FailureCauses.of(spec.breaker());
        this.receiving = receiving;
        this.time = time;
        this.metrics = metrics;
        this.maxProbeInterval = spec.breaker().maxProbeInterval();
        this.breaker = new Breaker(spec.breaker(), time, this);
    }

    /**
     * The subscription's breaker as its manifest says; {@link BreakerPart#OFF} when it is turned off or the caller has
     * no {@code receiving} to pause.
     */
    static BreakerPart of(SubscriptionSpec spec, Optional<Receiving> receiving, Time time, DriverMetrics metrics) {
        boolean on = receiving.isPresent() && spec.breaker().enabled();
        // The first state, so the metric has a series from the start.
        metrics.breakerChanged(on ? Breaker.State.CLOSED.label() : "off");
        return on ? new HeldForOutage(spec, receiving.get(), time, metrics) : OFF;
    }

    @Override
    public void succeeded(long startedNanos) {
        breaker.succeeded(startedNanos);
    }

    @Override
    public void settledOtherwise() {
        breaker.settledOtherwise();
    }

    /**
     * A call failed: whether its message is held here (the breaker is open, or this failure opened it, and its cause is
     * a dependency's); then it is neither negatively acknowledged nor counted. False: it takes the failure's usual
     * path, as a probe that failed does.
     */
    @Override
    public boolean holds(UnitOfWork<Message<?>> work, Failure failure) {
        // At exactly-once: the call succeeded and only its acknowledgement was refused, the input being acknowledged
        // already (a commit reported failed had in fact committed) or by another copy's transaction. The dependency
        // answered; probing such a held message again would only be refused again.
        boolean refusedAsConflict = CommitStage.refusedAsConflict(failure.cause());
        boolean dependency = !refusedAsConflict && causes.isDependency(failure);
        synchronized (breaker) {
            if (probe != null && work.message() == probe) {
                probe = null;
                if (refusedAsConflict) {
                    breaker.succeeded(time.nanoTime());
                    return false;
                }
                failedProbes.add(work.message());
                breaker.probeFailed(describe(failure));
                return false;
            }
            if (refusedAsConflict) {
                // A call received before the opening says nothing of the outage, as a late success does not.
                breaker.succeeded(work.receivedNanos());
                return false;
            }
            if (!dependency) {
                breaker.settledOtherwise();
                return false;
            }
            if (!breaker.dependencyFailed(keyOf(work.message()), describe(failure)) || abandoned) {
                return false;
            }
            if (probe == null && breaker.state() == Breaker.State.HALF_OPEN) {
                // Receiving again was the probe (nothing was held): this failure says the outage goes on.
                breaker.probeFailed(describe(failure));
            }
            hold(work);
            return true;
        }
    }

    @Override
    public boolean isDependency(Failure failure) {
        return causes.isDependency(failure);
    }

    /**
     * The backoff of {@code kept}, which failed with a dependency's cause, ended: whether it is held here instead of
     * being negatively acknowledged (the breaker opened while it waited).
     */
    @Override
    public boolean keeps(UnitOfWork<Message<?>> kept) {
        synchronized (breaker) {
            if (failedProbes.remove(kept.message()) || abandoned || breaker.state() == Breaker.State.CLOSED) {
                return false;
            }
            hold(kept);
            return true;
        }
    }

    /** New code went live (a swap): it may be the fix, so the breaker closes and the held messages meet it. */
    @Override
    public void newCode() {
        breaker.close("new code went live");
    }

    /** The subscription stops: the held messages stay unacknowledged and come back once the consumer is gone. */
    @Override
    public int abandon() {
        synchronized (breaker) {
            abandoned = true;
            cancelProbe();
            int dropped = heldCount;
            held.clear();
            failedProbes.clear();
            heldCount = 0;
            heldChanged(-dropped);
            return dropped;
        }
    }

    /** {@code closed}, {@code open} or {@code half-open}. */
    @Override
    public String state() {
        return breaker.state().label();
    }

    /** Why the breaker is in its state. */
    @Override
    public String reason() {
        return breaker.reason();
    }

    /** Messages held now. */
    @Override
    public int held() {
        synchronized (breaker) {
            return heldCount;
        }
    }

    @Override
    public void changed(Breaker.State from, Breaker.State to, String reason) {
        if (to == Breaker.State.OPEN && from == Breaker.State.CLOSED) {
            log.warn(
                    "subscription '{}': breaker open: {}; receiving paused, failing messages held without spending"
                            + " attempts, a probe every {} up to {}",
                    subscription,
                    reason,
                    DurationText.format(FIRST_PROBE),
                    DurationText.format(maxProbeInterval));
        } else {
            log.info(
                    "subscription '{}': breaker {} (was {}): {}{}",
                    subscription,
                    to.label(),
                    from.label(),
                    reason,
                    to == Breaker.State.CLOSED
                            ? "; receiving resumed, " + heldCount + " held messages handed out again"
                            : "");
        }
        metrics.breakerChanged(to.label());
        switch (to) {
            case OPEN -> {
                receiving.pause();
                scheduleProbe();
            }
            case HALF_OPEN -> {
                // The probe itself is on its way (probe()).
            }
            case CLOSED -> {
                cancelProbe();
                probe = null;
                nextProbe = FIRST_PROBE;
                receiving.resume();
                redriveAll();
            }
        }
    }

    private void hold(UnitOfWork<Message<?>> work) {
        // Its copy for a redelivery: a long outage holds neither the failure's cause nor what the call left behind.
        held.computeIfAbsent(keyOf(work.message()), key -> new ArrayDeque<>()).addLast(work.forRedelivery());
        heldCount++;
        heldChanged(1);
    }

    private void scheduleProbe() {
        cancelProbe();
        Duration delay = nextProbe;
        Duration doubled = nextProbe.multipliedBy(2);
        nextProbe = doubled.compareTo(maxProbeInterval) > 0 ? maxProbeInterval : doubled;
        try {
            probeTimer = time.schedule(delay, this::probe);
        } catch (RejectedExecutionException closing) {
            // The timer is closing with the runtime: the held messages stay unacknowledged and come back.
            probeTimer = null;
        }
    }

    private void cancelProbe() {
        if (probeTimer != null) {
            probeTimer.cancel();
            probeTimer = null;
        }
    }

    /** The probe's turn: the oldest message of the next key in rotation, or receiving again when none is held. */
    private void probe() {
        synchronized (breaker) {
            probeTimer = null;
            if (abandoned || breaker.state() != Breaker.State.OPEN) {
                return;
            }
            Iterator<Map.Entry<String, ArrayDeque<UnitOfWork<Message<?>>>>> keys =
                    held.entrySet().iterator();
            if (!keys.hasNext()) {
                breaker.probing("receiving again (no message held)");
                receiving.resume();
                return;
            }
            Map.Entry<String, ArrayDeque<UnitOfWork<Message<?>>>> first = keys.next();
            String key = first.getKey();
            ArrayDeque<UnitOfWork<Message<?>>> queue = first.getValue();
            UnitOfWork<Message<?>> next = queue.removeFirst();
            // The key goes to the back of the rotation: the next probe tries another key.
            keys.remove();
            if (!queue.isEmpty()) {
                held.put(key, queue);
            }
            heldCount--;
            heldChanged(-1);
            probe = next.message();
            breaker.probing("message " + next.id() + " (attempt " + next.attempt() + ")");
            receiving.redrive(next.message(), next.receivedNanos());
            awaitAnswer(next.message(), next.id());
        }
    }

    /**
     * Gives the probe {@code sent} until the next probe's turn to succeed or fail. A probe can end without either (its
     * call asked for a retry or gave no outcome, or its exactly-once commit failed): receiving stays paused while it
     * is out, so without this deadline the subscription would stall half-open.
     */
    private void awaitAnswer(Message<?> sent, Object id) {
        Duration within = nextProbe;
        try {
            probeTimer = time.schedule(within, () -> {
                synchronized (breaker) {
                    probeTimer = null;
                    if (abandoned || probe != sent) {
                        return;
                    }
                    probe = null;
                    // Open again: the next probe follows after its interval.
                    breaker.probeFailed("no answer from message " + id + " within " + DurationText.format(within));
                }
            });
        } catch (RejectedExecutionException closing) {
            // The timer is closing with the runtime: the held messages stay unacknowledged and come back.
            probeTimer = null;
        }
    }

    private void redriveAll() {
        int count = heldCount;
        for (ArrayDeque<UnitOfWork<Message<?>>> queue : held.values()) {
            for (UnitOfWork<Message<?>> work : queue) {
                receiving.redrive(work.message(), work.receivedNanos());
            }
        }
        held.clear();
        heldCount = 0;
        heldChanged(-count);
    }

    private void heldChanged(int delta) {
        if (delta != 0) {
            metrics.heldForOutageChanged(delta);
        }
    }

    /** The message's ordering key or key; its id when it has neither (it counts as a key of its own). */
    private static String keyOf(Message<?> message) {
        String key = SubscriptionDriver.orderingKey(message);
        return key != null ? key : "id:" + message.getMessageId();
    }

    private static String describe(Failure failure) {
        Throwable cause = failure.printableCause();
        return cause == null ? failure.stage().label() : cause.getClass().getName();
    }
}
