package dev.settle.runtime.driver;

import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

/**
 * Runs tasks on a fixed pool while tasks with the same key run one after another, in submission order.
 *
 * <p>A key with work running or queued owns a queue; its next task is handed to the pool only when the previous
 * one has finished, so no pool thread ever waits for a key. Tasks without a key run as soon as a thread is free.
 * Each task is told the number (0 .. threads-1) of the pool thread that runs it, also on a thread that replaced one a
 * task killed.
 */
final class KeyOrderedExecutor {
    private final ExecutorService pool;
    private final Object lock = new Object();
    /** Keys with a task running, and their queued successors. Guarded by {@link #lock}. */
    private final Map<String, ArrayDeque<IntConsumer>> busyKeys = new HashMap<>();

    KeyOrderedExecutor(String name, int threads) {
        Slots slots = new Slots(threads);
        ThreadFactory factory = runnable -> {
            Thread thread = new Worker(runnable, name, slots.take());
            thread.setDaemon(true);
            return thread;
        };
        // A task that throws ends its thread, and the pool makes a new one: that one takes the dead thread's slot, or
        // it would be told a slot past the last (issue 41: every call on it then failed before it was settled, its
        // permit kept, until the subscription stood still).
        pool =
                new ThreadPoolExecutor(
                        threads, threads, 0L, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), factory) {
                    @Override
                    protected void afterExecute(Runnable task, Throwable thrown) {
                        if (thrown != null) {
                            slots.give(slot());
                        }
                    }
                };
    }

    void execute(String key, IntConsumer task) {
        if (key == null) {
            pool.execute(() -> task.accept(slot()));
            return;
        }
        synchronized (lock) {
            ArrayDeque<IntConsumer> waiting = busyKeys.get(key);
            if (waiting != null) {
                waiting.add(task);
                return;
            }
            busyKeys.put(key, new ArrayDeque<>());
        }
        pool.execute(() -> runInOrder(key, task));
    }

    private void runInOrder(String key, IntConsumer task) {
        try {
            task.accept(slot());
        } finally {
            IntConsumer successor;
            synchronized (lock) {
                successor = busyKeys.get(key).poll();
                if (successor == null) {
                    busyKeys.remove(key);
                }
            }
            if (successor != null) {
                pool.execute(() -> runInOrder(key, successor));
            }
        }
    }

    /** Stops the threads; the driver calls this once nothing is in flight, or the grace has passed. */
    void shutdownNow() {
        pool.shutdownNow();
    }

    private static int slot() {
        return ((Worker) Thread.currentThread()).slot;
    }

    /** The slot numbers no living thread has; the lowest is taken first. */
    private static final class Slots {
        private final BitSet free = new BitSet();

        Slots(int threads) {
            free.set(0, threads);
        }

        synchronized int take() {
            int slot = free.nextSetBit(0);
            if (slot < 0) {
                throw new IllegalStateException("every slot has a living thread: the pool made one thread too many");
            }
            free.clear(slot);
            return slot;
        }

        synchronized void give(int slot) {
            free.set(slot);
        }
    }

    private static final class Worker extends Thread {
        final int slot;

        Worker(Runnable runnable, String name, int slot) {
            super(runnable, name + "-" + slot);
            this.slot = slot;
        }
    }
}
