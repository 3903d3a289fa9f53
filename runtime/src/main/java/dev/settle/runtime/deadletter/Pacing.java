package dev.settle.runtime.deadletter;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** A rate for copies sent one after another: {@code settle dlq replay --rate} and the re-drive's {@code redriveRate}. */
final class Pacing {
    private final long nanosPerCopy;

    /** @param perSecond copies a second at most; 0 for as fast as the broker stores them */
    Pacing(long perSecond) {
        this.nanosPerCopy = perSecond == 0 ? 0 : TimeUnit.SECONDS.toNanos(1) / perSecond;
    }

    /** The first copy's slot: now. */
    long start() {
        return System.nanoTime();
    }

    /** Waits for the copy's slot under the rate; the next slot. */
    long pace(long slot) {
        if (nanosPerCopy == 0) {
            return slot;
        }
        long now = System.nanoTime();
        if (slot > now) {
            // The rate's own wait: the next copy's slot is a time, not a condition to poll.
            LockSupport.parkNanos(slot - now);
            return slot + nanosPerCopy;
        }
        return now + nanosPerCopy;
    }
}
