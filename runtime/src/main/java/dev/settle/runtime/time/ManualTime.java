package dev.settle.runtime.time;

import java.time.Duration;
import java.util.PriorityQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;

/**
 * Time that moves only when told to, as Kafka's {@code MockTime}: {@link #advance} runs every task that comes due,
 * in the order of their times (ties in the order they were scheduled), on the calling thread. Thread-safe; tasks
 * run outside the lock, so a task may schedule another (it runs in the same advance if it is due by then).
 */
public final class ManualTime implements Time {
    private record Task(long dueNanos, long sequence, Runnable run) {}

    private final PriorityQueue<Task> tasks = new PriorityQueue<>((a, b) ->
            a.dueNanos != b.dueNanos ? Long.compare(a.dueNanos, b.dueNanos) : Long.compare(a.sequence, b.sequence));
    private long now;
    /** The wall clock's reading at {@link #now}'s start: the two move together. */
    private final long wallStartMillis;

    private final long startNanos;
    private long sequence;
    private int waiting;
    private boolean closed;

    /** Starts at an arbitrary reading, as {@code System.nanoTime()} does: only differences mean anything. */
    public ManualTime() {
        this(1_000_000_000L);
    }

    public ManualTime(long startNanos) {
        this(startNanos, 1_700_000_000_000L);
    }

    /** Starts at {@code startNanos}, the wall clock reading {@code wallStartMillis} then. */
    public ManualTime(long startNanos, long wallStartMillis) {
        this.now = startNanos;
        this.startNanos = startNanos;
        this.wallStartMillis = wallStartMillis;
    }

    @Override
    public synchronized long currentTimeMillis() {
        return wallStartMillis + Math.floorDiv(now - startNanos, 1_000_000L);
    }

    /**
     * Waits until {@code condition} holds or another thread {@linkplain #advance advances} this clock past the
     * deadline: a test moves the time, never sleeps for it.
     */
    @Override
    public boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        long nanos = Time.saturatedNanos(timeout);
        long deadline;
        synchronized (this) {
            deadline = now + nanos < now ? Long.MAX_VALUE : now + nanos;
            waiting++;
        }
        try {
            while (!condition.getAsBoolean()) {
                synchronized (this) {
                    if (now >= deadline) {
                        return false;
                    }
                    // Woken by advance; the millisecond covers a condition changed by another thread.
                    wait(1);
                }
            }
            return true;
        } finally {
            synchronized (this) {
                waiting--;
            }
        }
    }

    /** Threads in {@link #await} now: a test advances the clock once the wait it means has begun. */
    public synchronized int waiting() {
        return waiting;
    }

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    @Override
    public synchronized Scheduled schedule(Duration delay, Runnable task) {
        if (closed) {
            throw new RejectedExecutionException("the manual timer is closed");
        }
        long nanos = Time.saturatedNanos(delay);
        long due = now + nanos < now ? Long.MAX_VALUE : now + nanos;
        Task scheduled = new Task(due, sequence++, task);
        tasks.add(scheduled);
        return () -> {
            synchronized (this) {
                tasks.remove(scheduled);
            }
        };
    }

    /**
     * Moves the clock on by {@code step}, running every task due by the new time. Never back: a task that advanced it
     * further (the test kit's handler sleeping in its call) leaves it there.
     */
    public void advance(Duration step) {
        long target;
        synchronized (this) {
            long nanos = Time.saturatedNanos(step);
            target = now + nanos < now ? Long.MAX_VALUE : now + nanos;
        }
        while (true) {
            Task next;
            synchronized (this) {
                Task head = tasks.peek();
                if (head == null || head.dueNanos > target) {
                    now = Math.max(now, target);
                    notifyAll();
                    return;
                }
                next = tasks.poll();
                now = Math.max(now, next.dueNanos);
            }
            next.run.run();
        }
    }

    /** Tasks scheduled and not yet run. */
    public synchronized int pending() {
        return tasks.size();
    }

    /** Drops every pending task and refuses new ones, as closing the real timer does. */
    public synchronized void close() {
        closed = true;
        tasks.clear();
    }
}
