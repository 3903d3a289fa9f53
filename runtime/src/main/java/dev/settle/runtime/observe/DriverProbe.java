package dev.settle.runtime.observe;

import dev.settle.runtime.driver.SubscriptionDriver;
import java.time.Duration;
import java.util.Optional;

/** {@link SubscriptionProbe} over a running {@link SubscriptionDriver}. */
record DriverProbe(SubscriptionDriver driver) implements SubscriptionProbe {
    @Override
    public String subscription() {
        return driver.subscription();
    }

    @Override
    public boolean alive() {
        return driver.isAlive();
    }

    @Override
    public Optional<String> failure() {
        return driver.loopFailure().map(Throwable::toString);
    }

    @Override
    public Duration longestRunningCall() {
        return driver.longestRunningCall();
    }

    @Override
    public Duration handlerTimeout() {
        return driver.spec().handlerTimeout();
    }

    @Override
    public int callsIgnoringInterrupt() {
        return driver.callsIgnoringInterrupt();
    }

    @Override
    public int concurrency() {
        return driver.spec().concurrency();
    }

    @Override
    public boolean connected() {
        return driver.isConnected();
    }

    @Override
    public Optional<String> waitingFor() {
        return driver.waitingFor();
    }

    @Override
    public Optional<String> breaker() {
        String state = driver.breakerState();
        if (state.equals("closed") || state.equals("off")) {
            return Optional.empty();
        }
        return Optional.of("breaker " + state + " (" + driver.breakerReason() + "): receiving paused, "
                + driver.heldForOutage() + " messages held without spending attempts");
    }
}
