package dev.settle.runtime.journal;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal's records on their way to one journal topic, off the message path: {@link #offer} puts a record in a
 * bounded queue and never blocks, a full queue drops the record (counted), and the runtime's timer hands what is
 * queued to the {@link JournalSink} at least every {@link #FLUSH_EVERY}. A sink that cannot write (the topic deleted
 * or forbidden, the broker down) loses those records, counted, and delays nothing: settlement never waits for the
 * journal. Thread-safe.
 */
public final class JournalWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(JournalWriter.class);

    /** The bound: a record reaches the topic's producer within 100 ms of its settlement. */
    static final Duration FLUSH_EVERY = Duration.ofMillis(100);
    /**
     * Records held at most: 16 384 of a few hundred bytes each, a few MB, and 160 000 settlements a second at the
     * flush interval, above what one runtime settles.
     */
    static final int CAPACITY = 16_384;
    /** Losses are logged at most this often, with the count since the last line. */
    private static final long LOSS_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final String topic;
    private final JournalSink sink;
    private final Time time;
    private final ArrayBlockingQueue<JournalRecord> queue;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong written = new AtomicLong();
    private final AtomicLong lossesLogged = new AtomicLong();
    private volatile long lastLossLogNanos;
    private volatile Time.Scheduled next;
    private volatile boolean closed;

    JournalWriter(String topic, JournalSink sink, Time time, int capacity) {
        this.topic = topic;
        this.sink = sink;
        this.time = time;
        this.queue = new ArrayBlockingQueue<>(capacity);
        this.lastLossLogNanos = time.nanoTime() - LOSS_LOG_NANOS;
        scheduleFlush();
    }

    /** A writer to {@code topic} through {@code sink}, flushed on {@code time}'s timer. */
    static JournalWriter start(String topic, JournalSink sink, Time time) {
        return new JournalWriter(topic, sink, time, CAPACITY);
    }

    /** Queues {@code record}; never blocks. False, and counted as dropped, when the queue is full or closed. */
    public boolean offer(JournalRecord record) {
        if (closed || !queue.offer(record)) {
            dropped.incrementAndGet();
            return false;
        }
        return true;
    }

    /** A record that could not be made: counted with the dropped ones. */
    void lostOne() {
        dropped.incrementAndGet();
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
     * Hands every queued record to the sink now; its write completes on its own. On the runtime's shared timer thread,
     * it never blocks: the Pulsar sink encodes the records (under a microsecond each, a few milliseconds for a full
     * queue) and calls the producer's {@code sendAsync}, which with {@code blockIfQueueFull(false)} and no compression
     * only checksums and queues the message (a full producer fails the send at once).
     */
    void flush() {
        List<JournalRecord> batch = new ArrayList<>(Math.min(queue.size(), 1024));
        queue.drainTo(batch);
        if (batch.isEmpty()) {
            return;
        }
        try {
            sink.write(batch).whenComplete((lost, error) -> {
                int notStored = error != null ? batch.size() : lost;
                written.addAndGet(batch.size() - notStored);
                if (notStored > 0) {
                    lost(notStored);
                }
            });
        } catch (RuntimeException e) {
            // A sink's bug must not end the flushes: its batch is lost and counted, the next flush tries again.
            lost(batch.size());
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
        closed = true;
        Time.Scheduled scheduled = next;
        if (scheduled != null) {
            scheduled.cancel();
        }
        flush();
        sink.close();
    }
}
