package dev.settle.runtime.observe;

import java.time.Duration;
import java.util.Optional;

/** A subscription whose health a test sets by hand. */
final class FakeProbe implements SubscriptionProbe {
    private final String subscription;
    volatile boolean alive = true;
    volatile String failure;
    volatile Duration longestRunningCall = Duration.ZERO;
    volatile Duration handlerTimeout = Duration.ofSeconds(60);
    volatile int ignoringInterrupt;
    volatile int concurrency = 1;
    volatile boolean connected = true;
    volatile String breaker;

    FakeProbe(String subscription) {
        this.subscription = subscription;
    }

    FakeProbe disconnected() {
        connected = false;
        return this;
    }

    /** Its breaker open or half-open, as {@code /readyz} shows it. */
    FakeProbe breaker(String detail) {
        breaker = detail;
        return this;
    }

    @Override
    public Optional<String> breaker() {
        return Optional.ofNullable(breaker);
    }

    FakeProbe running(Duration call) {
        longestRunningCall = call;
        return this;
    }

    /** {@code ignoring} of its {@code threads} handler threads ignore the interrupt of a call past its deadline. */
    FakeProbe stuck(int ignoring, int threads) {
        ignoringInterrupt = ignoring;
        concurrency = threads;
        return this;
    }

    @Override
    public int callsIgnoringInterrupt() {
        return ignoringInterrupt;
    }

    @Override
    public int concurrency() {
        return concurrency;
    }

    FakeProbe died(String why) {
        alive = false;
        failure = why;
        return this;
    }

    @Override
    public String subscription() {
        return subscription;
    }

    @Override
    public boolean alive() {
        return alive;
    }

    @Override
    public Optional<String> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public Duration longestRunningCall() {
        return longestRunningCall;
    }

    @Override
    public Duration handlerTimeout() {
        return handlerTimeout;
    }

    @Override
    public boolean connected() {
        return connected;
    }
}
