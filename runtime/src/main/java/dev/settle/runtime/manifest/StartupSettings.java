package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;

/**
 * How long the runtime may take to start.
 *
 * @param timeout how long the handlers' {@code open()} may take, together, before {@code /livez} fails so that
 *     Kubernetes restarts a pod stuck in start-up; a broker outage does not count (it makes the pod unready)
 */
public record StartupSettings(Duration timeout) {
    /** Five minutes. */
    public static final StartupSettings DEFAULT = new StartupSettings(Duration.ofMinutes(5));

    public StartupSettings {
        Objects.requireNonNull(timeout, "timeout");
    }
}
