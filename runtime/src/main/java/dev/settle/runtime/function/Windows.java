package dev.settle.runtime.function;

import dev.settle.runtime.driver.LeftUnacknowledged;
import dev.settle.runtime.manifest.WindowSettings;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Predicate;
import org.apache.pulsar.client.api.MessageId;
import org.slf4j.Logger;

/**
 * The open windows of one windowed function, in processing time, as Pulsar Functions' {@code WindowManager} cuts them
 * without a timestamp extractor: a count window fires every {@code slidingInterval} messages with the last
 * {@code length} of them; a time window fires every {@code slidingInterval} milliseconds with the messages received in
 * the last {@code length}; an empty window does not fire.
 *
 * <p>Each message waits on a future of its delivery's outputs (the driver acknowledges it once that completes): it
 * completes once no later window can hold the message and the outputs of every window that held it are stored; it
 * fails when one of them failed (the function threw, or a send was not stored), so the message comes back. A stop
 * lets go of the messages still waiting for a window ({@link LeftUnacknowledged}): they stay unacknowledged and come
 * back to the next consumer.
 *
 * <p>Thread-safe: one monitor orders the messages and the windows; a window is computed and its function called
 * under it, on the thread of the call that completed a count window, or on this object's one thread for a time
 * window (the runtime's timer thread only starts it).
 */
final class Windows implements AutoCloseable {
    /** Calls the function with one window; the future completes once its outputs are stored. */
    @FunctionalInterface
    interface Fire {
        CompletableFuture<Void> fire(List<InputRecord> window);
    }

    private static final class Waiting {
        final InputRecord record;
        final CompletableFuture<MessageId> done;
        final long index;
        final long receivedNanos;
        /** Every window that held it stored; guarded by the monitor of {@link Windows}. */
        CompletableFuture<Void> outputs = CompletableFuture.completedFuture(null);

        Waiting(InputRecord record, CompletableFuture<MessageId> done, long index, long receivedNanos) {
            this.record = record;
            this.done = done;
            this.index = index;
            this.receivedNanos = receivedNanos;
        }
    }

    private final String subscription;
    private final WindowSettings settings;
    private final Time time;
    private final Fire fire;
    private final Logger log;
    /** Fires time windows off the runtime's timer thread; null for count windows. */
    private final ExecutorService firing;

    /** Guarded by this, oldest first. */
    private final Deque<Waiting> waiting = new ArrayDeque<>();
    /** Messages received so far; guarded by this. */
    private long received;
    /** Guarded by this: while a stop lets go of the open windows, arriving messages are let go of too. */
    private boolean stopping;

    private volatile boolean closed;
    private volatile long startedNanos;

    Windows(String subscription, WindowSettings settings, Time time, Fire fire, Logger log) {
        this.subscription = subscription;
        this.settings = settings;
        this.time = time;
        this.fire = fire;
        this.log = log;
        this.firing = settings.byCount()
                ? null
                : Executors.newSingleThreadExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "settle-window-" + subscription);
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /** Starts a time window's clock: the first window fires one sliding interval from now. */
    void start() {
        if (firing == null) {
            return;
        }
        startedNanos = time.nanoTime();
        scheduleTick(1);
    }

    private void scheduleTick(long tick) {
        if (closed) {
            return;
        }
        // Due at a fixed cadence from the start, as Functions' scheduleAtFixedRate, so late ticks do not drift.
        long due = startedNanos + tick * settings.slidingDuration().toNanos();
        Duration delay = Duration.ofNanos(Math.max(0, due - time.nanoTime()));
        try {
            time.schedule(delay, () -> {
                scheduleTick(tick + 1);
                try {
                    firing.execute(() -> fireTimeWindow(due));
                } catch (RejectedExecutionException closing) {
                    // closed meanwhile: no more windows
                }
            });
        } catch (RejectedExecutionException closing) {
            // the runtime's timer is closing: no more windows
        }
    }

    /**
     * Adds a message to the open windows; {@code done} completes as the class says. A count window that this message
     * completes fires now, on this thread.
     */
    synchronized void add(InputRecord record, CompletableFuture<MessageId> done) {
        if (stopping || closed) {
            done.completeExceptionally(leftAlone());
            return;
        }
        // A count window needs no clock (a port made without one may run it).
        waiting.addLast(new Waiting(record, done, ++received, settings.byCount() ? 0 : time.nanoTime()));
        if (settings.byCount() && received % settings.slidingInterval() == 0) {
            long n = received;
            fireAndRelease(
                    w -> w.index > n - settings.length(),
                    w -> w.index <= n + settings.slidingInterval() - settings.length());
        }
    }

    private synchronized void fireTimeWindow(long dueNanos) {
        if (stopping || closed) {
            return;
        }
        long length = settings.lengthDuration().toNanos();
        long sliding = settings.slidingDuration().toNanos();
        // The window is (due - length, due]: its fire may run after its end (the timer or this thread late), and a
        // message received meanwhile belongs to the next window only.
        fireAndRelease(
                w -> w.receivedNanos <= dueNanos && dueNanos - w.receivedNanos < length,
                w -> dueNanos + sliding - w.receivedNanos >= length);
    }

    /**
     * Fires the window of the waiting messages {@code inWindow} picks (when there are any), then releases those that
     * {@code release} says no later window holds. Under this object's monitor.
     */
    private void fireAndRelease(Predicate<Waiting> inWindow, Predicate<Waiting> release) {
        List<Waiting> window = new ArrayList<>();
        for (Waiting w : waiting) {
            if (inWindow.test(w)) {
                window.add(w);
            }
        }
        if (!window.isEmpty()) {
            CompletableFuture<Void> stored;
            try {
                stored = fire.fire(window.stream().map(w -> w.record).toList());
            } catch (RuntimeException | LinkageError e) {
                stored = CompletableFuture.failedFuture(e);
            }
            for (Waiting w : window) {
                w.outputs = CompletableFuture.allOf(w.outputs, stored);
            }
        }
        while (!waiting.isEmpty() && release.test(waiting.peekFirst())) {
            Waiting w = waiting.removeFirst();
            w.outputs.whenComplete((none, error) -> {
                if (error == null) {
                    w.done.complete(null);
                } else {
                    w.done.completeExceptionally(error);
                }
            });
        }
    }

    /**
     * A stop begins: the messages waiting for a window are let go of (left unacknowledged, they come back to the
     * next consumer), and so is every message that arrives until {@link #resume()}.
     */
    synchronized void stopping() {
        stopping = true;
        int open = letGo();
        if (open > 0) {
            log.info(
                    "subscription '{}': {} messages of open windows left unacknowledged at the stop; they come back to"
                            + " the next consumer",
                    subscription,
                    open);
        }
    }

    /** The stop is over: the next consumer's messages fill new windows. */
    synchronized void resume() {
        stopping = false;
    }

    private int letGo() {
        int open = waiting.size();
        // The count starts again: the next consumer's messages fill new windows.
        received = 0;
        for (Waiting w : waiting) {
            w.done.completeExceptionally(leftAlone());
        }
        waiting.clear();
        return open;
    }

    private LeftUnacknowledged leftAlone() {
        return new LeftUnacknowledged("subscription '" + subscription + "' stopped before its window was published");
    }

    @Override
    public void close() {
        closed = true;
        synchronized (this) {
            letGo();
        }
        if (firing != null) {
            firing.shutdownNow();
        }
    }

    /** How many messages wait for a window, for tests and logs. */
    synchronized int waitingCount() {
        return waiting.size();
    }
}
