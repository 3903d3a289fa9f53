package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

/**
 * A driver's handler calls now running, and the deliveries whose outcome is still pending after their call
 * returned, each with when its call started: for the handler timeout ({@link #longest}) and for a swap that ran
 * past its grace ({@link #awaitNoneStartedBy}), and their leases, which {@link #expireOverdue} gives up at their
 * deadline. A call tells its calling slot's {@link Processing.Watch}; the watches are made once, so a call allocates
 * nothing here: its lease is one array store, read by a check that visits every slot a few times a second.
 */
final class RunningCalls {
    private static final long IDLE = Long.MIN_VALUE;

    private final Time time;
    /** Per calling slot: when its current handler call started (on {@link #time}), or {@link #IDLE}. */
    private final AtomicLongArray callStarts;
    /** Per calling slot: the lease of its latest call (that call may be over: its state says). */
    private final AtomicReferenceArray<InFlight> leases;
    /** Deliveries whose outcome is still pending after the call returned. */
    private final Set<InFlight> pending = ConcurrentHashMap.newKeySet();

    private final Processing.Watch[] watches;

    RunningCalls(int slots, Time time) {
        this.time = time;
        this.callStarts = new AtomicLongArray(slots);
        this.leases = new AtomicReferenceArray<>(slots);
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
        for (InFlight call : pending) {
            longest = Math.max(longest, now - call.startedNanos());
        }
        return Duration.ofNanos(longest);
    }

    /**
     * Gives up every call whose deadline has passed ({@link InFlight#expire}: the caller is interrupted) and hands
     * each to {@code timedOut} to be settled; returns how many threads are still in a call given up at least
     * {@code ignoringAfter} ago: they ignore their interrupt. Called by the one lease check, never concurrently.
     */
    int expireOverdue(Consumer<InFlight> timedOut, Duration ignoringAfter) {
        long now = time.nanoTime();
        int ignoring = 0;
        for (int slot = 0; slot < leases.length(); slot++) {
            InFlight call = leases.get(slot);
            if (call == null) {
                continue;
            }
            if (call.expire(now)) {
                timedOut.accept(call);
            } else if (call.expired()
                    && callStarts.get(slot) == call.startedNanos()
                    && leases.get(slot) == call
                    && now - call.deadlineNanos() >= ignoringAfter.toNanos()) {
                // Still in the call that was given up: the thread has not come back from the interrupt.
                ignoring++;
            }
        }
        for (InFlight call : pending) {
            if (call.expire(now)) {
                timedOut.accept(call);
            }
            // Given up here or through its slot (just before its call returned): settled, no longer pending, though
            // its outcome may never complete.
            if (call.expired()) {
                pending.remove(call);
            }
        }
        return ignoring;
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
        for (InFlight call : pending) {
            if (call.startedNanos() - nanos <= 0) {
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
        public void leased(InFlight call) {
            // A release store: the lease check reads it a few times a second, and a call seen a tick late is only
            // given up a tick late.
            leases.lazySet(slot, call);
        }

        @Override
        public void returned() {
            // A release store, not a volatile one (no fence per message): seen a little late, the call only looks
            // as if it ran a little longer. calling() stays volatile: a swap must see it before the call reads the
            // port.
            callStarts.lazySet(slot, IDLE);
            // Not kept past its call: the message would stay reachable while the slot is idle.
            leases.lazySet(slot, null);
        }

        @Override
        public void pending(InFlight call) {
            pending.add(call);
        }

        @Override
        public void completed(InFlight call) {
            pending.remove(call);
        }
    }
}
