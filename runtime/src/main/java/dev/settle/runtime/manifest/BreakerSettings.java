package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A subscription's outage circuit breaker (docs/concepts.md, "An outage is not a poison message"): the manifest's
 * {@code breaker}. It opens when at least {@code minKeys} distinct keys fail with a dependency's cause within
 * {@code window} and those failures are most of the calls in it; open, receiving is paused and the messages in hand
 * are held without spending attempts, and one of them is tried again (a probe) at a backoff that grows up to
 * {@code maxProbeInterval}.
 *
 * @param enabled whether the breaker runs; off, every failure counts an attempt as before
 * @param minKeys distinct keys (a message without one counts as its own) that must fail within the window, at least 1
 * @param window how far back failures and calls are counted, positive
 * @param maxProbeInterval the longest wait between two probes while open, positive
 * @param exceptions further exception classes (by name, a subclass matches) that name a dependency's failure
 */
public record BreakerSettings(
        boolean enabled, int minKeys, Duration window, Duration maxProbeInterval, List<String> exceptions) {
    /** {@code minKeys}: more than one caller's bad luck, fewer than one second of a slow stream. */
    public static final int DEFAULT_MIN_KEYS = 5;
    /** {@code window}: the default backoff's first four waits (1.5 s) fit in it, so it opens before a last attempt. */
    public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(2);
    /** {@code maxProbeInterval}: an outage's end is noticed within this. */
    public static final Duration DEFAULT_MAX_PROBE_INTERVAL = Duration.ofSeconds(2);

    /** On, every setting at its default. */
    public static final BreakerSettings DEFAULT =
            new BreakerSettings(true, DEFAULT_MIN_KEYS, DEFAULT_WINDOW, DEFAULT_MAX_PROBE_INTERVAL, List.of());
    /** Off: {@code breaker: {enabled: false}}. */
    public static final BreakerSettings OFF =
            new BreakerSettings(false, DEFAULT_MIN_KEYS, DEFAULT_WINDOW, DEFAULT_MAX_PROBE_INTERVAL, List.of());

    public BreakerSettings {
        Objects.requireNonNull(window, "window");
        Objects.requireNonNull(maxProbeInterval, "maxProbeInterval");
        exceptions = List.copyOf(exceptions);
        if (minKeys < 1) {
            throw new IllegalArgumentException("minKeys below 1: " + minKeys);
        }
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be positive: " + window);
        }
        if (maxProbeInterval.isNegative() || maxProbeInterval.isZero()) {
            throw new IllegalArgumentException("maxProbeInterval must be positive: " + maxProbeInterval);
        }
    }
}
