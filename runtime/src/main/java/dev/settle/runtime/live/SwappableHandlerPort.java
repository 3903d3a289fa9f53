package dev.settle.runtime.live;

import dev.settle.runtime.driver.HandlerPort;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;

/**
 * The driver's port for a subscription whose code can change while it runs: it holds the current
 * {@link Generation} and switches to the next with nothing lost (docs/live-code.md, "The swap").
 *
 * <p>A swap closes a gate: calls that arrive wait at it; the current generation's calls in flight finish, up to the
 * grace, and the driver applies their outcomes as ever; then the next generation becomes current and the waiting
 * calls go to it. No message is nacked or redelivered because of a swap: a message held for {@code retryAfter} is
 * nacked when it comes due, as it would have been, and comes back to whichever generation is current then. The
 * consumer's schema is the first generation's for the consumer's life; later generations decode with their own
 * ({@code SdkHandlerPort.swappedIn}).
 *
 * <p>Thread-safe. One monitor guards the current generation and every generation's count of calls; it is held
 * only to count, never during a handler call.
 */
public final class SwappableHandlerPort implements HandlerPort {
    private final Schema<?> schema;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}. */
    private Generation current;
    /** Guarded by {@link #lock}: a swap is waiting for the current generation's calls to finish. */
    private boolean switching;

    SwappableHandlerPort(Generation first) {
        this.schema = first.port.schema();
        this.current = first;
    }

    /** What the swap did: the generation it retired, how long new calls waited, and whether the old calls ended. */
    record Swap(Generation retired, long pauseNanos, boolean drained) {}

    @Override
    public Schema<?> schema() {
        return schema;
    }

    @Override
    public CompletionStage<Outcome> handle(Message<?> message) throws Exception {
        Generation generation = enter();
        // A call is in flight from enter until its outcome is known: an outcome still waiting for the handler's
        // publishes belongs to the generation that made them.
        CompletionStage<Outcome> outcome;
        try {
            outcome = generation.port.handle(message);
        } catch (Exception | Error e) {
            exit(generation);
            throw e;
        }
        return outcome.whenComplete((settled, error) -> exit(generation));
    }

    /** Waits while a swap is under way, then counts a call against the current generation and returns it. */
    private Generation enter() throws InterruptedException {
        synchronized (lock) {
            while (switching) {
                lock.wait();
            }
            current.calls++;
            return current;
        }
    }

    private void exit(Generation generation) {
        synchronized (lock) {
            if (--generation.calls == 0) {
                lock.notifyAll();
            }
        }
    }

    /**
     * Makes {@code next} (opened) the current generation: new calls wait; the current one's calls get up to
     * {@code grace} to finish; then {@code next} takes over. The retired generation is not closed here: its owner
     * closes it once {@link #awaitIdle} says its calls are over.
     */
    Swap swap(Generation next, Duration grace) {
        long started = System.nanoTime();
        long deadline = started + grace.toNanos();
        synchronized (lock) {
            switching = true;
            Generation retired = current;
            boolean interrupted = false;
            try {
                while (retired.calls > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(lock, left);
                    } catch (InterruptedException e) {
                        interrupted = true;
                        break;
                    }
                }
                return new Swap(retired, System.nanoTime() - started, retired.calls == 0);
            } finally {
                current = next;
                switching = false;
                lock.notifyAll();
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** Waits up to {@code timeout} for a retired generation's last calls to end; whether they did. */
    boolean awaitIdle(Generation generation, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (generation.calls > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
            return true;
        }
    }

    Generation current() {
        synchronized (lock) {
            return current;
        }
    }

    @Override
    public String toString() {
        return String.valueOf(current().handler);
    }
}
