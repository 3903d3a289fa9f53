package dev.settle.runtime;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.SubscriptionProbe;
import java.time.Duration;
import java.util.Optional;

/**
 * A subscription a reload added whose code did not open: /readyz shows it unready, with why, until a retry starts
 * it (then its driver's probe takes its place). Retried after 1 s, then twice as long each time, up to a minute.
 */
final class PendingSubscription implements SubscriptionProbe {
    private static final Duration FIRST = Duration.ofSeconds(1);
    private static final Duration LONGEST = Duration.ofMinutes(1);

    final Deployment from;
    final SubscriptionSpec spec;
    /** Guarded by the running subscriptions' monitor; read by probes. */
    volatile String cause;

    volatile Duration delay = Duration.ZERO;
    volatile int attempts;

    PendingSubscription(Deployment from, SubscriptionSpec spec) {
        this.from = from;
        this.spec = spec;
    }

    void failed(Throwable e) {
        attempts++;
        cause = e.getMessage() != null ? e.getMessage() : e.toString();
        Duration doubled = delay.isZero() ? FIRST : delay.multipliedBy(2);
        delay = doubled.compareTo(LONGEST) > 0 ? LONGEST : doubled;
    }

    @Override
    public String subscription() {
        return spec.name();
    }

    @Override
    public boolean alive() {
        // Waiting to be retried is not a dead receive loop: restarting the process would not help more.
        return true;
    }

    @Override
    public Optional<String> failure() {
        return Optional.empty();
    }

    @Override
    public Duration longestRunningCall() {
        return Duration.ZERO;
    }

    @Override
    public Duration handlerTimeout() {
        return spec.handlerTimeout();
    }

    @Override
    public boolean connected() {
        return false;
    }

    @Override
    public Optional<String> waitingFor() {
        return Optional.of("added by a manifest reload, its code did not open (" + attempts + " attempts, next in "
                + DurationText.format(delay) + "): " + cause);
    }
}
