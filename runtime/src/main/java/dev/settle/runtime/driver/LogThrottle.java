package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One line of a kind every {@link #INTERVAL_NANOS} per subscription, counting the ones left out: a handler failing on
 * every message must not flood the log, and the next line says how many it stands for. Thread-safe.
 */
final class LogThrottle {
    static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Time time;
    private final AtomicLong nextAllowed = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong suppressed = new AtomicLong();

    LogThrottle(Time time) {
        this.time = time;
    }

    /**
     * Whether a line may be logged now: -1 when not (it is counted), else how many were left out since the last one.
     */
    long admit() {
        long now = time.nanoTime();
        long allowed = nextAllowed.get();
        if ((allowed != Long.MIN_VALUE && now - allowed < 0)
                || !nextAllowed.compareAndSet(allowed, now + INTERVAL_NANOS)) {
            suppressed.incrementAndGet();
            return -1;
        }
        return suppressed.getAndSet(0);
    }
}
