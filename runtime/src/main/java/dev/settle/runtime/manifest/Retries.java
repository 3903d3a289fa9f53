package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How a subscription waits before a message comes back.
 *
 * @param maxRetryDelay the longest {@code retryAfter} the handler declares it will ask for; checked against the
 *     ack timeout before start
 * @param failureBackoff the wait after a failure; empty to redeliver a failed message at once
 */
public record Retries(Optional<Duration> maxRetryDelay, Optional<FailureBackoff> failureBackoff) {
    /** No declared maximum; the {@link FailureBackoff#DEFAULT default failure backoff}. */
    public static final Retries DEFAULT = new Retries(Optional.empty(), Optional.of(FailureBackoff.DEFAULT));

    public Retries {
        Objects.requireNonNull(maxRetryDelay, "maxRetryDelay");
        Objects.requireNonNull(failureBackoff, "failureBackoff");
    }
}
