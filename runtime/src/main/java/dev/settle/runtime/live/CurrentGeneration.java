package dev.settle.runtime.live;

import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SubscriptionDriver;
import java.time.Duration;
import java.util.function.Function;
import org.apache.pulsar.client.api.Schema;

/**
 * Which {@link Generation} a subscription runs, and the driver that runs it: a swap is the driver's
 * ({@link SubscriptionDriver#swap}, docs/live-code.md "The swap"), so a message costs nothing for it until a swap
 * happens. The consumer's schema is the first generation's for the consumer's life; later generations decode with
 * their own ({@code SdkHandlerPort.swappedIn}).
 *
 * <p>Thread-safe: swaps and driver starts run one at a time (this object's monitor); {@link #current()} is read
 * without it, so a status is answered while a swap waits for its calls.
 */
public final class CurrentGeneration {
    private final Schema<?> schema;
    private volatile Generation current;
    /** Guarded by this object's monitor: the driver running the current generation; null before it starts. */
    private SubscriptionDriver driver;

    CurrentGeneration(Generation first) {
        this.schema = first.port.schema();
        this.current = first;
    }

    /** What a swap did: the generation it retired, how long new calls waited, and whether the old calls ended. */
    record Swap(Generation retired, long pauseNanos, boolean drained, SubscriptionDriver driver, long switchedNanos) {}

    /** The schema the consumer reads with: the first generation's. */
    Schema<?> consumerSchema() {
        return schema;
    }

    Generation current() {
        return current;
    }

    /**
     * Starts a driver on the current generation's port ({@code start} makes it); later swaps go through it. At start,
     * and when a reload restarts the subscription's consumer.
     */
    public synchronized SubscriptionDriver start(Function<HandlerPort, SubscriptionDriver> start) {
        driver = start.apply(current.port);
        return driver;
    }

    /**
     * Makes {@code next} (opened) current: new calls wait; the current generation's calls get up to {@code grace} to
     * finish; then {@code next} takes over. The retired generation is not closed here: its owner closes it once
     * {@link #awaitIdle} says its calls are over.
     */
    synchronized Swap swap(Generation next, Duration grace) {
        Generation retired = current;
        if (driver == null) {
            current = next;
            return new Swap(retired, 0, true, null, 0);
        }
        SubscriptionDriver.Swap swap = driver.swap(next.port, grace);
        current = next;
        return new Swap(retired, swap.pauseNanos(), swap.drained(), driver, swap.switchedNanos());
    }

    /** Waits up to {@code timeout} for the calls a swap left running on the retired generation; whether they ended. */
    static boolean awaitIdle(Swap swap, Duration timeout) throws InterruptedException {
        return swap.drained() || swap.driver().awaitCallsBefore(swap.switchedNanos(), timeout);
    }

    @Override
    public String toString() {
        return String.valueOf(current.handler);
    }
}
