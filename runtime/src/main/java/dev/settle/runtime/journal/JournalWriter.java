package dev.settle.runtime.journal;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal's records on their way to one journal topic, off the message path: {@link #offer} encodes a record into
 * the open message body ({@link JournalBatch.Body}) and never blocks, a full writer drops the record (counted), and the
 * runtime's timer hands the bodies to the {@link JournalSink} at least every {@link #FLUSH_EVERY}. Encoding when the
 * record is offered, not at the flush, keeps no record as objects between the two and leaves the flush only the
 * sends (docs/benchmarks.md). A sink that cannot write (the topic deleted
 * or forbidden, the broker down) loses those records, counted, and delays nothing: settlement never waits for the
 * journal. Thread-safe.
 */
public final class JournalWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(JournalWriter.class);

    /** The bound: a record reaches the topic's producer within 100 ms of its settlement. */
    static final Duration FLUSH_EVERY = Duration.ofMillis(100);
    /**
     * Records held at most: 16 384 of about 55 bytes each, about 1 MB, and 160 000 settlements a second at the flush
     * interval, above what one runtime settles.
     */
    static final int CAPACITY = 16_384;
    /** Losses are logged at most this often, with the count since the last line. */
    private static final long LOSS_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final String topic;
    private final JournalSink sink;
    private final Time time;
    private final int capacity;
    /** Guards {@link #open}, {@link #sealed} and {@link #held}. */
    private final Object lock = new Object();
    /**
     * The body records are written into; cut at {@link JournalBatch#MAX_BODY_BYTES} into {@link #sealed}. Its buffer
     * is made that size and a few records more once, so it never grows by doubling to 512 KB, a humongous object for
     * G1 in a 512 MB heap.
     */
    private final JournalBatch.Body open = new JournalBatch.Body(JournalBatch.MAX_BODY_BYTES + 4096);

    private final List<JournalBatch> sealed = new ArrayList<>();
    /** Records in {@link #open} and {@link #sealed}: at most {@link #capacity}. */
    private int held;

    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong lossesLogged = new AtomicLong();
    private volatile long lastLossLogNanos;
    private volatile Time.Scheduled next;
    private volatile boolean closed;
    /** The wall clock and the monotonic one read together, at the last flush: {@link #wallMillis}. */
    private volatile ClockPair clocks;

    private record ClockPair(long millis, long nanos) {}

    JournalWriter(String topic, JournalSink sink, Time time, int capacity) {
        this.topic = topic;
        this.sink = sink;
        this.time = time;
        this.capacity = capacity;
        this.lastLossLogNanos = time.nanoTime() - LOSS_LOG_NANOS;
        readClocks();
        scheduleFlush();
    }

    /** A writer to {@code topic} through {@code sink}, flushed on {@code time}'s timer. */
    static JournalWriter start(String topic, JournalSink sink, Time time) {
        return new JournalWriter(topic, sink, time, CAPACITY);
    }

    /** Queues {@code record}; never blocks. False, and counted as dropped, when the writer is full or closed. */
    public boolean offer(JournalRecord record) {
        synchronized (lock) {
            if (!room()) {
                return false;
            }
            open.write(record);
            added();
        }
        return true;
    }

    /** Queues the record {@code draft} holds, encoding it now: {@code draft} is free again on return. */
    boolean offer(Draft draft) {
        synchronized (lock) {
            if (!room()) {
                return false;
            }
            open.write(draft);
            added();
        }
        return true;
    }

    /** Under {@link #lock}: whether one more record may be held, counting it as dropped when not. */
    private boolean room() {
        if (closed || held >= capacity) {
            dropped.incrementAndGet();
            return false;
        }
        return true;
    }

    /** Under {@link #lock}: a record was written into {@link #open}. */
    private void added() {
        held++;
        FlushStop.offered();
        if (open.size() >= JournalBatch.MAX_BODY_BYTES) {
            sealed.add(open.done());
        }
    }

    /** A record that could not be made: counted with the dropped ones. */
    void lostOne() {
        dropped.incrementAndGet();
    }

    /**
     * The wall clock's millisecond at {@code nanos}, a reading of {@code time.nanoTime()}: from the two clocks read
     * together at the last flush, so a record's time costs no clock read of its own. Within a millisecond of reading
     * the wall clock then, but for how far it was set or slewed since the last flush (at most 100 ms before).
     */
    long wallMillis(long nanos) {
        ClockPair at = clocks;
        return at.millis() + Math.floorDiv(nanos - at.nanos(), 1_000_000L);
    }

    private void readClocks() {
        clocks = new ClockPair(time.currentTimeMillis(), time.nanoTime());
    }

    /** Records lost so far: dropped by a full queue, or not stored by the topic. */
    public long dropped() {
        return dropped.get();
    }

    /** Records the topic stored so far. */
    public long written() {
        return written.get();
    }

    /** The journal topic. */
    public String topic() {
        return topic;
    }

    /**
     * Hands every held record to the sink now; its write completes on its own. On the runtime's shared timer thread,
     * it never blocks: the records are already encoded, and the Pulsar sink calls the producer's {@code sendAsync},
     * which with {@code blockIfQueueFull(false)} and no compression only checksums and queues the message (a full
     * producer fails the send at once).
     */
    void flush() {
        readClocks();
        List<JournalBatch> batches;
        int records;
        synchronized (lock) {
            if (FlushStop.stopped() || (sink.starting() && !closed)) {
                // Kept for a later flush, bounded by the capacity: the sink's first producer is still being made (or
                // the test-only FlushStop holds them for a kill).
                return;
            }
            if (open.count() > 0) {
                sealed.add(open.done());
            }
            if (sealed.isEmpty()) {
                return;
            }
            batches = List.copyOf(sealed);
            records = held;
            sealed.clear();
            held = 0;
        }
        try {
            sink.write(batches).whenComplete((lost, error) -> {
                int notStored = error != null ? records : lost;
                written.addAndGet(records - notStored);
                if (notStored > 0) {
                    lost(notStored);
                }
            });
        } catch (RuntimeException e) {
            // A sink's bug must not end the flushes: its records are lost and counted, the next flush tries again.
            lost(records);
        }
    }

    private void lost(int records) {
        dropped.addAndGet(records);
        long now = time.nanoTime();
        if (now - lastLossLogNanos >= LOSS_LOG_NANOS) {
            lastLossLogNanos = now;
            long total = dropped.get();
            long since = total - lossesLogged.getAndSet(total);
            log.warn(
                    "journal topic {}: {} records not written in the last {} s ({} in all); settlement goes on without"
                            + " them (docs/trace.md)",
                    topic,
                    since,
                    TimeUnit.NANOSECONDS.toSeconds(LOSS_LOG_NANOS),
                    total);
        }
    }

    private void scheduleFlush() {
        if (closed) {
            return;
        }
        try {
            next = time.schedule(FLUSH_EVERY, () -> {
                try {
                    flush();
                } finally {
                    scheduleFlush();
                }
            });
        } catch (RejectedExecutionException timerClosed) {
            // The runtime's timer is closed: the runtime is stopping and close() sends what is left.
        }
    }

    /** Stops the flushes, hands what is queued to the sink and closes it (which sends what it holds). */
    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
        }
        Time.Scheduled scheduled = next;
        if (scheduled != null) {
            scheduled.cancel();
        }
        flush();
        sink.close();
    }
}
