package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.BreakerSettings;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.time.Time;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One subscription's outage circuit breaker as a state machine on the runtime's clock (docs/concepts.md, "An outage
 * is not a poison message"): closed, it counts the calls settled in the last {@code window} and the keys that failed
 * with a dependency's cause ({@link FailureCauses}); it opens when at least {@code minKeys} distinct keys did and
 * those failures are more than half of the calls. Open, a probe makes it half-open; the probe's failure opens it
 * again, and any success of a call begun since it opened (the probe's, or a call's while it is half-open or open)
 * closes it, as does new code: a call begun before, settled after (it waited for its outputs or its exactly-once
 * commit), tells nothing of the outage. It
 * decides only: pausing, holding and probing are {@link HeldForOutage}'s. Thread-safe; every change is told to the
 * listener once, under the breaker's lock, so a pause and the resume after it can never be told in the wrong order.
 */
final class Breaker {
    /** The breaker's state: the {@code state} label of {@code settle_breaker_state}. */
    enum State {
        CLOSED,
        OPEN,
        HALF_OPEN;

        /** As metrics, {@code /readyz} and {@code settle status} spell it: {@code half-open}. */
        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Told of each change, on the thread that made it, under the breaker's lock: it must be quick. */
    interface Listener {
        void changed(State from, State to, String reason);
    }

    /** The window's calls are counted in this many slices: a success costs a counter, not an entry. */
    private static final int SLICES = 20;

    private final BreakerSettings settings;
    private final Time time;
    private final Listener listener;
    private final long windowNanos;
    private final long sliceNanos;

    /** Guarded by this: per slice, its number (time / sliceNanos), its calls, its dependency failures. */
    private final long[] sliceIndex = new long[SLICES];

    private final int[] calls = new int[SLICES];
    private final int[] dependencyFailures = new int[SLICES];
    /** Guarded by this: the dependency failures in the window, oldest first, and how many each key has there. */
    private final ArrayDeque<KeyFailure> failedKeys = new ArrayDeque<>();

    private final Map<String, Integer> failuresByKey = new HashMap<>();

    private State state = State.CLOSED;
    /** Guarded by this: when it last opened from closed. */
    private long openedNanos;

    private String reason = "no outage seen";

    private record KeyFailure(long nanos, String key) {}

    Breaker(BreakerSettings settings, Time time, Listener listener) {
        this.settings = settings;
        this.time = time;
        this.listener = listener;
        this.windowNanos = Time.saturatedNanos(settings.window());
        this.sliceNanos = Math.max(1, windowNanos / SLICES);
        java.util.Arrays.fill(sliceIndex, Long.MIN_VALUE);
    }

    /**
     * A call begun at {@code startedNanos} was settled without failing (acknowledged or dropped): evidence the
     * dependency is back if it began since the breaker opened. A call begun before, whose settlement came after (it
     * waited for its outputs or its exactly-once commit), ran before the outage was seen: at exactly-once such late
     * successes closed the breaker again within 0.1 s of each opening while the dependency was still down.
     */
    synchronized void succeeded(long startedNanos) {
        count(time.nanoTime(), false);
        if (state != State.CLOSED && startedNanos - openedNanos >= 0) {
            moveTo(State.CLOSED, "a call succeeded");
        }
    }

    /** A call was settled in another way (a retry the handler asked for, no outcome, a failure of its own). */
    synchronized void settledOtherwise() {
        count(time.nanoTime(), false);
    }

    /**
     * A call failed with a dependency's cause on {@code key} (a message without one passes its id): opens the breaker
     * when that makes {@code minKeys} distinct keys and most of the window's calls.
     *
     * @return whether the breaker is open or half-open now
     */
    synchronized boolean dependencyFailed(String key, String cause) {
        long now = time.nanoTime();
        count(now, true);
        failedKeys.addLast(new KeyFailure(now, key));
        failuresByKey.merge(key, 1, Integer::sum);
        if (state != State.CLOSED) {
            return true;
        }
        int keys = failuresByKey.size();
        int[] totals = totals(now);
        if (keys < settings.minKeys() || 2L * totals[1] <= totals[0]) {
            return false;
        }
        moveTo(
                State.OPEN,
                String.format(
                        "%d keys failed with a dependency's cause within %s (%d of %d calls), the last with %s",
                        keys, DurationText.format(settings.window()), totals[1], totals[0], cause));
        return true;
    }

    /** A probe is on its way: open becomes half-open. Does nothing unless open. */
    synchronized void probing(String what) {
        if (state == State.OPEN) {
            moveTo(State.HALF_OPEN, "probing with " + what);
        }
    }

    /** The probe failed with a dependency's cause: half-open becomes open again. */
    synchronized void probeFailed(String cause) {
        if (state == State.HALF_OPEN) {
            moveTo(State.OPEN, "the probe failed with " + cause);
        }
    }

    /** Closes it whatever its state ({@code why}: new code went live). Does nothing when closed. */
    synchronized void close(String why) {
        if (state != State.CLOSED) {
            moveTo(State.CLOSED, why);
        }
    }

    synchronized State state() {
        return state;
    }

    /** Why it is in its state, as the log line said when it changed. */
    synchronized String reason() {
        return reason;
    }

    private void moveTo(State next, String why) {
        State from = state;
        state = next;
        reason = why;
        if (from == State.CLOSED) {
            openedNanos = time.nanoTime();
        }
        listener.changed(from, next, why);
        if (next == State.CLOSED) {
            // A new outage is judged on its own failures, not on those that opened the last one.
            failedKeys.clear();
            failuresByKey.clear();
            java.util.Arrays.fill(sliceIndex, Long.MIN_VALUE);
        }
    }

    private void count(long now, boolean dependencyFailure) {
        long index = Math.floorDiv(now, sliceNanos);
        int slot = (int) Math.floorMod(index, (long) SLICES);
        if (sliceIndex[slot] != index) {
            sliceIndex[slot] = index;
            calls[slot] = 0;
            dependencyFailures[slot] = 0;
        }
        calls[slot]++;
        if (dependencyFailure) {
            dependencyFailures[slot]++;
        }
        while (!failedKeys.isEmpty() && now - failedKeys.peekFirst().nanos() > windowNanos) {
            KeyFailure old = failedKeys.removeFirst();
            failuresByKey.computeIfPresent(old.key(), (key, n) -> n == 1 ? null : n - 1);
        }
    }

    /** The window's calls and dependency failures: the slices of the last {@code window}. */
    private int[] totals(long now) {
        long newest = Math.floorDiv(now, sliceNanos);
        int[] totals = new int[2];
        for (int slot = 0; slot < SLICES; slot++) {
            if (sliceIndex[slot] > newest - SLICES) {
                totals[0] += calls[slot];
                totals[1] += dependencyFailures[slot];
            }
        }
        return totals;
    }
}
