package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A driver's handler calls now running, and the deliveries whose outcome is still pending after their call
 * returned, each with when its call started: for the handler timeout ({@link #longest}) and for a swap that ran
 * past its grace ({@link #awaitNoneStartedBy}). A call tells its calling slot's {@link Processing.Watch}; the
 * watches are made once, so a call allocates nothing here.
 */
final class RunningCalls {
    private static final long IDLE = Long.MIN_VALUE;

    private final Time time;
    /** Per calling slot: when its current handler call started (on {@link #time}), or {@link #IDLE}. */
    private final AtomicLongArray callStarts;
    /** Deliveries whose outcome is still pending after the call returned, with when their call started. */
    private final Map<Object, Long> pendingSince = new ConcurrentHashMap<>();

    private final Processing.Watch[] watches;

    RunningCalls(int slots, Time time) {
        this.time = time;
        this.callStarts = new AtomicLongArray(slots);
        this.watches = new Processing.Watch[slots];
        for (int slot = 0; slot < slots; slot++) {
            callStarts.set(slot, IDLE);
            watches[slot] = new SlotWatch(slot);
        }
    }

    /** The watch of the calls made on calling slot {@code slot} (0 .. slots-1), one call at a time. */
    Processing.Watch slot(int slot) {
        return watches[slot];
    }

    /**
     * How long the longest handler call now running has been running, a delivery waiting for its outcome counted
     * from its call's start; zero when none runs.
     */
    Duration longest() {
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

    /**
     * Waits up to {@code timeout} until no call that started at or before {@code nanos} runs or has its outcome
     * pending; whether none does.
     */
    boolean awaitNoneStartedBy(long nanos, Duration timeout) throws InterruptedException {
        return time.await(() -> !anyStartedBy(nanos), timeout);
    }

    private boolean anyStartedBy(long nanos) {
        for (int i = 0; i < callStarts.length(); i++) {
            long started = callStarts.get(i);
            if (started != IDLE && started - nanos <= 0) {
                return true;
            }
        }
        for (long started : pendingSince.values()) {
            if (started - nanos <= 0) {
                return true;
            }
        }
        return false;
    }

    /** What one calling slot's calls tell: a call runs on one slot at a time. */
    private final class SlotWatch implements Processing.Watch {
        private final int slot;

        SlotWatch(int slot) {
            this.slot = slot;
        }

        @Override
        public void calling(long startedNanos) {
            callStarts.set(slot, startedNanos);
        }

        @Override
        public void returned() {
            // A release store, not a volatile one (no fence per message): seen a little late, the call only looks
            // as if it ran a little longer. calling() stays volatile: a swap must see it before the call reads the
            // port.
            callStarts.lazySet(slot, IDLE);
        }

        @Override
        public void pending(Object delivery, long startedNanos) {
            pendingSince.put(delivery, startedNanos);
        }

        @Override
        public void completed(Object delivery) {
            pendingSince.remove(delivery);
        }
    }
}
