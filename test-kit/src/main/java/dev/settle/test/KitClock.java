package dev.settle.test;

import dev.settle.runtime.time.ManualTime;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.time.Instant;
import java.util.function.BooleanSupplier;

/**
 * The test's clock: the runtime's {@link ManualTime}, which only {@link #advance} moves, and a wall clock that
 * moves with it. Every timer task (a released retryAfter or failure backoff, a client's ack timeout) is followed
 * by {@code afterEachTask}, which hands what it redelivered to the handler before the next task runs, at the
 * time the task was due.
 */
final class KitClock implements Time {
    private final ManualTime manual = new ManualTime();
    private final long startNanos = manual.nanoTime();
    private final long startEpochMillis;
    private volatile Runnable afterEachTask = () -> {};

    KitClock(Instant start) {
        this.startEpochMillis = start.toEpochMilli();
    }

    void afterEachTask(Runnable pump) {
        afterEachTask = pump;
    }

    @Override
    public long nanoTime() {
        return manual.nanoTime();
    }

    @Override
    public Scheduled schedule(Duration delay, Runnable task) {
        return manual.schedule(delay, () -> {
            task.run();
            afterEachTask.run();
        });
    }

    @Override
    public long currentTimeMillis() {
        return wallMillis();
    }

    @Override
    public boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
        return manual.await(condition, timeout);
    }

    void advance(Duration step) {
        manual.advance(step);
    }

    /** How far the clock has been moved since the driver was created. */
    Duration elapsed() {
        return Duration.ofNanos(manual.nanoTime() - startNanos);
    }

    /** How long after the driver was created the reading {@code nanos} was taken. */
    Duration sinceStart(long nanos) {
        return Duration.ofNanos(nanos - startNanos);
    }

    /** The wall clock: the driver's start plus {@link #elapsed()}, in milliseconds since the epoch. */
    long wallMillis() {
        return startEpochMillis + elapsed().toMillis();
    }

    int pending() {
        return manual.pending();
    }

    void close() {
        manual.close();
    }
}
