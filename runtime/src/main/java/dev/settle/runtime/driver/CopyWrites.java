package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * The copies one part writes to settle their originals (the dead letters, the delay copies): each written as the
 * guarantee's {@link CopyCommits} say, counted as a pending send of the subscription while it is written ({@code
 * maxPendingOutputs}: a handler failing or delaying every message at full speed then waits for its copies to be stored
 * instead of queueing them without bound), and counted until its original is settled, for the stop. Thread-safe.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
final class CopyWrites<M> {
    private final CopyCommits<M> commits;
    private final PendingOutputs pending;
    private final Time time;
    /** Copies being written, whose originals are not yet settled. */
    private final AtomicInteger inFlight = new AtomicInteger();

    CopyWrites(CopyCommits<M> commits, PendingOutputs pending, Time time) {
        this.commits = commits;
        this.pending = pending;
        this.time = time;
    }

    /** How each copy is written: as it is, or in a transaction of its own with its original's acknowledgement. */
    CopyCommits<M> commits() {
        return commits;
    }

    /**
     * Writes one copy ({@code write}: a throw is taken as a failed write), then tells {@code settled} how it went (the
     * stored copy's id or null, and the error or null) on the thread that completes it; the copy is counted until
     * {@code settled} has returned.
     */
    void write(Supplier<CompletionStage<?>> write, BiConsumer<Object, Throwable> settled) {
        inFlight.incrementAndGet();
        pending.waiting(1);
        CompletionStage<?> written;
        try {
            written = write.get();
        } catch (RuntimeException e) {
            written = CompletableFuture.failedFuture(e);
        }
        written.whenComplete((stored, error) -> {
            pending.settled(1);
            try {
                settled.accept(stored, error);
            } finally {
                inFlight.decrementAndGet();
            }
        });
    }

    /** The stop's: waits up to {@code timeout} until no copy is being written; whether none is. */
    boolean awaitNone(Duration timeout) throws InterruptedException {
        return time.await(() -> inFlight.get() == 0, timeout);
    }
}
