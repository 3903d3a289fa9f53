package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

/**
 * The key-hold table of one subscription (docs/concepts.md, "Key-ordered retries"): while a message of a key waits for
 * its retry (a {@code retry()}, a {@code retryAfter}, a failure's backoff), the key's later messages are parked here,
 * unacknowledged, instead of being handled before it; every other key goes on. The retried message comes back from
 * the broker as a redelivery with the same id and passes; once it is settled for good (acknowledged, dropped,
 * dead-lettered, or left without an outcome) its key's parked messages are let go, oldest first; a dead letter is
 * counted as a gap in its key. A retry that does not come back within its delay plus {@code keyHoldTimeout} (on Shared
 * it may go to another runtime) lets them go too, counted as an inversion, and remembered for the retry's dead letter.
 *
 * <p>Order. A key's messages reach {@link #admit} in the order the key-ordered executor runs them, one at a time, so
 * parking keeps their order. Messages let go are handed back to the receiver ({@link #nextReleased}), which takes a
 * permit for each and runs it again through the executor: the table knows a let-go message when it is admitted again
 * (the same instance it handed out), so no caller says which is which.
 * Until every let-go message of a key has been admitted, the key stays in the table ("draining"), so a newer message
 * that reaches {@link #admit} meanwhile parks behind them; a let-go message whose predecessor failed again parks in
 * front of the messages that were never let go.
 *
 * <p>Cost. With no hold in the table, {@link #admit}, {@link #settled} and {@link #nextReleased} read one volatile
 * field each; while other keys are held, a message whose key is not adds a lookup in a concurrent map. The lock is
 * taken only for a held key. Thread-safe: the receiver, the executor's threads and the timer call in.
 *
 * @param <M> the message type ({@code Message<?>} in the driver, a fake in tests)
 */
final class KeyHolds<M> {
    /** A message parked behind its key, with when it was received (the client's ack-timeout clock runs from there). */
    record Parked<M>(M message, long receivedNanos) {}

    /** Told what the table does, for metrics. */
    interface Listener {
        Listener NONE = new Listener() {};

        /** Messages parked behind their key changed by {@code delta}. */
        default void heldBehindKeyChanged(int delta) {}

        /** A hold ended at its timeout: the key's later messages go before its retried message (an inversion). */
        default void keyHoldTimedOut() {}

        /** A message of a key went to the dead letters: its key goes on without it (a gap in the key's order). */
        default void keyGap() {}
    }

    private final Function<M, String> keyOf;
    private final Function<M, Object> idOf;
    private final Duration keyHoldTimeout;
    private final Time time;
    private final Listener listener;

    /**
     * Changed only holding this; read without it to learn that a key is not held (a hold for a key is made by the
     * settlement of the key's message, which happens before the key's next message is admitted).
     */
    private final Map<String, Hold<M>> holds = new ConcurrentHashMap<>();
    /** Let go, waiting for the receiver to hand them out again. Guarded by this. */
    private final ArrayDeque<Parked<M>> released = new ArrayDeque<>();
    /**
     * Let go and not yet admitted again, by identity: a let-go message comes back to {@link #admit} as the instance
     * {@link #nextReleased} handed out, while the broker's redelivery of a message is a new one. Guarded by this.
     */
    private final Set<M> out = Collections.newSetFromMap(new IdentityHashMap<>());
    /** How many {@link #released} holds: the receiver's one read while none waits. */
    private volatile int releasedWaiting;
    /** Guarded by this. */
    private int parked;
    /** Guarded by this. */
    private boolean abandoned;
    /**
     * The messages whose hold timed out, by id, and how many of their key's later messages were let go before them;
     * the oldest forgotten past {@link #PASSED_REMEMBERED}. Guarded by this.
     */
    private final Map<Object, Integer> passed = new LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Object, Integer> eldest) {
            return size() > PASSED_REMEMBERED;
        }
    };
    /** Whether {@link #passed} has ever held an entry: until then its lookup costs one read. */
    private volatile boolean anyPassed;

    /** Timed-out retries remembered for their dead letter: a bound, as a retry may never come back here. */
    static final int PASSED_REMEMBERED = 10_000;

    /** How many keys are in the table: the message path's one read while none is. */
    private volatile int keysHeld;

    /** One held key. */
    private static final class Hold<M> {
        /** The id of the message whose retry the key waits for; null while the key drains. */
        Object retried;
        /** When the key was first held, for the age of the oldest hold. */
        final long sinceNanos;
        /** Let go and not yet admitted again. */
        int outstanding;
        /**
         * Let go, then parked again (a predecessor let go with them failed again): in the key's order they come before
         * the messages still out, which come before {@link #waiting}.
         */
        final ArrayDeque<Parked<M>> ahead = new ArrayDeque<>();
        /** Parked and never let go, in order: newer than every message let go. */
        final ArrayDeque<Parked<M>> waiting = new ArrayDeque<>();
        /** Ends the hold when its retry does not come back in time; null while draining. */
        Time.Scheduled timeout;

        Hold(long sinceNanos) {
            this.sinceNanos = sinceNanos;
        }
    }

    /**
     * @param keyOf a message's key (its ordering key, else its key); null for none, which is never held
     * @param idOf a message's id: the retried message comes back with the same one
     * @param keyHoldTimeout how long past its retry's delay a key waits for the retried message
     */
    KeyHolds(
            Function<M, String> keyOf,
            Function<M, Object> idOf,
            Duration keyHoldTimeout,
            Time time,
            Listener listener) {
        this.keyOf = keyOf;
        this.idOf = idOf;
        this.keyHoldTimeout = keyHoldTimeout;
        this.time = time;
        this.listener = listener;
    }

    /**
     * Whether {@code message} may be handled now; false when it was parked behind its key's retry (the caller gives
     * its permit back and forgets it: it comes back through {@link #nextReleased}, and is known again here).
     */
    boolean admit(M message, long receivedNanos) {
        // A let-go message's key stays in the table until it is admitted again (or the table is abandoned).
        if (keysHeld == 0) {
            return true;
        }
        String key = keyOf.apply(message);
        if (key == null || !holds.containsKey(key)) {
            return true;
        }
        int delta = 0;
        try {
            synchronized (this) {
                Hold<M> hold = holds.get(key);
                if (hold == null || abandoned) {
                    return true;
                }
                if (out.remove(message)) {
                    // No longer parked: it is handled now, or parked again below.
                    delta--;
                    hold.outstanding--;
                    if (hold.retried != null || !hold.ahead.isEmpty()) {
                        // A predecessor let go with it failed again: it waits behind that one's retry, before the rest.
                        hold.ahead.add(new Parked<>(message, receivedNanos));
                        delta++;
                        if (hold.retried == null && hold.outstanding == 0) {
                            // That retry came back and was settled while this one was still out: nothing else will
                            // let the key go on (no retry pending, no timer), so it goes on now, in order.
                            letGo(key, hold);
                        }
                        return false;
                    }
                    if (hold.outstanding == 0) {
                        letGo(key, hold);
                    }
                    return true;
                }
                if (hold.retried != null && hold.retried.equals(idOf.apply(message))) {
                    // The retry itself, back from the broker.
                    return true;
                }
                // Behind the retry, and behind every message let go before it.
                hold.waiting.add(new Parked<>(message, receivedNanos));
                delta++;
                return false;
            }
        } finally {
            changed(delta);
        }
    }

    /**
     * {@code message} was settled as {@code how}: a retry ({@code retryPending}) holds its key for {@code retryIn} plus
     * the hold timeout; anything else lets go of its key if it was the retry the key waited for ({@code deadLettered}:
     * it went to the dead letters, and the key goes on without it).
     */
    void settled(M message, boolean retryPending, Duration retryIn, boolean deadLettered) {
        if (!retryPending && !deadLettered && keysHeld == 0) {
            return;
        }
        String key = keyOf.apply(message);
        if (key == null || (!retryPending && !deadLettered && !holds.containsKey(key))) {
            return;
        }
        try {
            synchronized (this) {
                if (abandoned) {
                    return;
                }
                Hold<M> hold = holds.get(key);
                Object id = idOf.apply(message);
                if (retryPending) {
                    if (hold == null) {
                        hold = new Hold<>(time.nanoTime());
                        holds.put(key, hold);
                        keysHeld = holds.size();
                    }
                    if (hold.retried == null) {
                        // A new hold, or a let-go message that failed again while its key drained.
                        hold.retried = id;
                    }
                    if (hold.retried.equals(id)) {
                        armTimeout(key, hold, retryIn);
                    }
                    return;
                }
                if (hold != null && id.equals(hold.retried)) {
                    release(key, hold);
                }
            }
        } finally {
            if (deadLettered) {
                listener.keyGap();
            }
        }
    }

    /**
     * How many later messages of {@code message}'s key were let go before it because its hold timed out; 0 when its
     * hold did not, or it was forgotten.
     */
    int passedBy(M message) {
        if (!anyPassed) {
            return 0;
        }
        synchronized (this) {
            Integer count = passed.get(idOf.apply(message));
            return count == null ? 0 : count;
        }
    }

    /** The next message let go to be handled again, oldest first; null when none waits. */
    Parked<M> nextReleased() {
        if (releasedWaiting == 0) {
            return null;
        }
        synchronized (this) {
            Parked<M> next = released.poll();
            releasedWaiting = released.size();
            return next;
        }
    }

    /** How many messages wait behind their key now. */
    synchronized int heldBehindKey() {
        return parked;
    }

    /** How long the oldest key now held has been held, in nanoseconds; 0 when none is. */
    long oldestHoldNanos() {
        if (keysHeld == 0) {
            return 0;
        }
        long now = time.nanoTime();
        long oldest = 0;
        synchronized (this) {
            for (Hold<M> hold : holds.values()) {
                oldest = Math.max(oldest, now - hold.sinceNanos);
            }
        }
        return oldest;
    }

    /**
     * The subscription stops: every parked message is let go of unhandled (it stays unacknowledged and comes back once
     * the consumer is gone), and nothing is held from now on. The messages that were parked (let go or not yet).
     */
    List<M> abandon() {
        int dropped;
        List<M> abandonedMessages = new ArrayList<>();
        synchronized (this) {
            abandoned = true;
            dropped = parked;
            for (Hold<M> hold : holds.values()) {
                if (hold.timeout != null) {
                    hold.timeout.cancel();
                }
                hold.ahead.forEach(each -> abandonedMessages.add(each.message()));
                hold.waiting.forEach(each -> abandonedMessages.add(each.message()));
            }
            // Let go and not admitted again: waiting in released, or taken by a receiver that met the stop.
            abandonedMessages.addAll(out);
            holds.clear();
            released.clear();
            out.clear();
            releasedWaiting = 0;
            keysHeld = 0;
        }
        changed(-dropped);
        return abandonedMessages;
    }

    /** Arms (again) the hold's timeout: {@code retryIn} plus {@code keyHoldTimeout} from now. Holding the lock. */
    private void armTimeout(String key, Hold<M> hold, Duration retryIn) {
        if (hold.timeout != null) {
            hold.timeout.cancel();
        }
        Object retried = hold.retried;
        try {
            hold.timeout = time.schedule(retryIn.plus(keyHoldTimeout), () -> timedOut(key, retried));
        } catch (RejectedExecutionException closing) {
            // The timer closes with the runtime: the subscription is stopping, and abandons its holds.
            hold.timeout = null;
        }
    }

    /** The retry of {@code retried} did not come back in time: its key's later messages go before it. */
    private void timedOut(String key, Object retried) {
        synchronized (this) {
            Hold<M> hold = holds.get(key);
            if (hold == null || !retried.equals(hold.retried)) {
                return;
            }
            hold.timeout = null;
            int wentFirst = hold.outstanding + hold.ahead.size() + hold.waiting.size();
            if (wentFirst > 0) {
                passed.put(retried, wentFirst);
                anyPassed = true;
            }
            release(key, hold);
        }
        listener.keyHoldTimedOut();
    }

    /**
     * The key's retry is over: it drains, its parked messages let go in order once nothing let go before is still out
     * (or it leaves the table when nothing is parked). Holding the lock.
     */
    private void release(String key, Hold<M> hold) {
        hold.retried = null;
        if (hold.timeout != null) {
            hold.timeout.cancel();
            hold.timeout = null;
        }
        if (hold.outstanding == 0) {
            letGo(key, hold);
        }
    }

    /**
     * Nothing let go of {@code key} is still out: what parked meanwhile is let go now, or the key leaves the table.
     * Holding the lock.
     */
    private void letGo(String key, Hold<M> hold) {
        if (hold.ahead.isEmpty() && hold.waiting.isEmpty()) {
            holds.remove(key);
            keysHeld = holds.size();
            return;
        }
        // In the key's order: those parked again after being let go came before the ones never let go.
        hold.outstanding += hold.ahead.size() + hold.waiting.size();
        released.addAll(hold.ahead);
        released.addAll(hold.waiting);
        for (Parked<M> each : hold.ahead) {
            out.add(each.message());
        }
        for (Parked<M> each : hold.waiting) {
            out.add(each.message());
        }
        releasedWaiting = released.size();
        hold.ahead.clear();
        hold.waiting.clear();
    }

    private void changed(int delta) {
        if (delta != 0) {
            synchronized (this) {
                parked += delta;
            }
            listener.heldBehindKeyChanged(delta);
        }
    }
}
