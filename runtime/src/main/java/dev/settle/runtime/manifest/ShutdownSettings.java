package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.Objects;

/**
 * How the runtime stops.
 *
 * @param grace how long in-flight handler calls, and then the handlers' {@code close()}, may run on after a stop is
 *     asked for (SIGTERM); what is still running then is abandoned, its messages left unacknowledged. Kubernetes'
 *     {@code terminationGracePeriodSeconds} must be longer (the chart adds 10 s)
 */
public record ShutdownSettings(Duration grace) {
    /** 20 s of grace. */
    public static final ShutdownSettings DEFAULT = new ShutdownSettings(Duration.ofSeconds(20));

    public ShutdownSettings {
        Objects.requireNonNull(grace, "grace");
    }
}
