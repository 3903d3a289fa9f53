package dev.settle.runtime.observe;

import dev.settle.runtime.driver.SubscriptionDriver;
import java.time.Duration;
import java.util.Optional;

/**
 * What {@code /livez} and {@code /readyz} need to know of one subscription. Called on the HTTP server's threads
 * at every probe request, concurrently with the driver: implementations read volatile state and do not block.
 */
public interface SubscriptionProbe {
    /** The subscription name, as in the manifest and the {@code subscription} label. */
    String subscription();

    /** Whether the receive loop runs, or was stopped on purpose. */
    boolean alive();

    /** Why the receive loop died (such as the exception's {@code toString()}), when {@link #alive()} is false. */
    Optional<String> failure();

    /** How long the longest handler call now running has run; {@link Duration#ZERO} when none runs. */
    Duration longestRunningCall();

    /** How long one handler call may run, unless extended, before it is interrupted and settled as a timeout. */
    Duration handlerTimeout();

    /** Threads still in a call given up at its deadline, ignoring their interrupt. */
    default int callsIgnoringInterrupt() {
        return 0;
    }

    /** How many calls may run at once: at this many threads ignoring their interrupt, nothing more is handled. */
    default int concurrency() {
        return 1;
    }

    /** Whether the consumer is connected to every topic's broker. */
    boolean connected();

    /** What the subscription waits for before it can subscribe at all (the broker, a busy subscription). */
    default Optional<String> waitingFor() {
        return Optional.empty();
    }

    /** A probe reading {@code driver}. */
    static SubscriptionProbe of(SubscriptionDriver driver) {
        return new DriverProbe(driver);
    }

    /**
     * The outage circuit breaker's state and why, when it is open or half-open (receiving paused, failing messages
     * held); empty when it is closed or off. Shown in {@code /readyz}'s detail, which stays 200: a paused subscription
     * is healthy.
     */
    default Optional<String> breaker() {
        return Optional.empty();
    }
}
