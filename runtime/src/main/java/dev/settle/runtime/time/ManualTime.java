package dev.settle.runtime.time;

import java.time.Duration;
import java.util.PriorityQueue;
import java.util.concurrent.RejectedExecutionException;

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
    private long sequence;
    private boolean closed;

    /** Starts at an arbitrary reading, as {@code System.nanoTime()} does: only differences mean anything. */
    public ManualTime() {
        this(1_000_000_000L);
    }

    public ManualTime(long startNanos) {
        this.now = startNanos;
    }

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    @Override
    public synchronized void schedule(Duration delay, Runnable task) {
        if (closed) {
            throw new RejectedExecutionException("the manual timer is closed");
        }
        long nanos = Time.saturatedNanos(delay);
        long due = now + nanos < now ? Long.MAX_VALUE : now + nanos;
        tasks.add(new Task(due, sequence++, task));
    }

    /** Moves the clock on by {@code step}, running every task due by the new time. */
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
                    now = target;
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
