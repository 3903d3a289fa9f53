package dev.settle.runtime.admin;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Slows down guessing the admin token: a bucket of {@link #BURST} wrong tokens, refilled one per {@link #REFILL}
 * seconds. While it is empty every request is answered 429 without its token being compared at all, so a guesser
 * learns nothing faster than one guess per second; a right token waits out the same second. The bucket is one for
 * the port, not per client address: behind a Service or a proxy every client has the same address.
 *
 * <p>Thread-safe.
 */
final class WrongTokens {
    static final int BURST = 10;
    static final long REFILL = 1;

    private final LongSupplier nanoTime;
    private double available = BURST;
    private long updated;

    WrongTokens(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.updated = nanoTime.getAsLong();
    }

    /** Whether a token may be compared now; if not, the seconds to wait, at least 1. */
    synchronized long secondsToWait() {
        refill();
        if (available >= 1) {
            return 0;
        }
        return Math.max(1, (long) Math.ceil((1 - available) * REFILL));
    }

    /** A token compared and found wrong. */
    synchronized void wrong() {
        refill();
        available = Math.max(0, available - 1);
    }

    private void refill() {
        long now = nanoTime.getAsLong();
        double seconds = (now - updated) / (double) TimeUnit.SECONDS.toNanos(1);
        available = Math.min(BURST, available + seconds / REFILL);
        updated = now;
    }
}
