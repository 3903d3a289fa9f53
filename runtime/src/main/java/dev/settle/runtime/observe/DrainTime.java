package dev.settle.runtime.observe;

import java.util.ArrayDeque;

/**
 * One subscription's time to drain (docs/scaling.md): its backlog, as the broker's subscription stats count it, over
 * the rate it has been settled at lately, from this runtime's own count of settled deliveries over the last
 * {@link #WINDOW_NANOS}; and the age of its oldest unsettled message, from the broker's
 * {@code earliestMsgPublishTimeInBacklog}. Fed by the poller of the broker's stats, read at each scrape. Thread-safe.
 */
public final class DrainTime {
    /** The settle rate is measured over the last minute: long enough to smooth bursts, short enough to follow a change. */
    static final long WINDOW_NANOS = 60_000_000_000L;

    /** (nanos, settled so far) samples, oldest first, none older than the window but the one just before it. */
    private final ArrayDeque<long[]> samples = new ArrayDeque<>();

    private long backlog;
    private long oldestPublishMillis;
    private long nowMillis;

    /**
     * Records a reading.
     *
     * @param nanos a monotonic reading, when {@code settled} was taken
     * @param settled the deliveries this runtime has settled on the subscription so far
     * @param backlog the subscription's backlog, summed over its topics
     * @param oldestPublishMillis the publish time of its oldest unsettled message (epoch millis), 0 for none
     * @param nowMillis the wall clock now (epoch millis), for the age
     */
    public synchronized void record(long nanos, long settled, long backlog, long oldestPublishMillis, long nowMillis) {
        samples.addLast(new long[] {nanos, settled});
        // Keep one sample at or before the window's start, so the rate covers the whole window.
        while (samples.size() > 2 && nanos - secondOldest()[0] >= WINDOW_NANOS) {
            samples.removeFirst();
        }
        this.backlog = backlog;
        this.oldestPublishMillis = oldestPublishMillis;
        this.nowMillis = nowMillis;
    }

    private long[] secondOldest() {
        var iterator = samples.iterator();
        iterator.next();
        return iterator.next();
    }

    /** Settled deliveries a second over the window; 0 before two readings. */
    public synchronized double settleRate() {
        if (samples.size() < 2) {
            return 0;
        }
        long[] first = samples.peekFirst();
        long[] last = samples.peekLast();
        long nanos = last[0] - first[0];
        return nanos <= 0 ? 0 : (last[1] - first[1]) * 1e9 / nanos;
    }

    /**
     * {@code settle_backlog_drain_seconds}: the backlog over the settle rate; 0 with no backlog; +Inf with a backlog
     * and nothing settled lately (it will not drain at this rate).
     */
    public synchronized double drainSeconds() {
        if (backlog <= 0) {
            return 0;
        }
        double rate = settleRate();
        return rate <= 0 ? Double.POSITIVE_INFINITY : backlog / rate;
    }

    /** {@code settle_oldest_unsettled_age_seconds}: 0 with no backlog (or no publish time known). */
    public synchronized double oldestUnsettledAgeSeconds() {
        if (backlog <= 0 || oldestPublishMillis <= 0) {
            return 0;
        }
        return Math.max(0, nowMillis - oldestPublishMillis) / 1000.0;
    }
}
