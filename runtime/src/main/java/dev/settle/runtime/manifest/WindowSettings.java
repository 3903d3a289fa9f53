package dev.settle.runtime.manifest;

import java.time.Duration;

/**
 * A windowed function's {@code windowConfig}, as Pulsar Functions' {@code WindowConfig} names it, with what it leaves
 * out filled in as Functions fills it in: a sliding interval of none is the window's length (a tumbling window).
 * Processing time only: the window a message falls into is decided by when it is received (count windows by its
 * order, time windows by the runtime's clock).
 *
 * @param byCount whether the window is measured in messages ({@code windowLengthCount}) rather than milliseconds
 *     ({@code windowLengthDurationMs})
 * @param length messages or milliseconds in a window
 * @param slidingInterval messages or milliseconds between two windows; {@code length} for a tumbling window
 */
public record WindowSettings(boolean byCount, long length, long slidingInterval) {
    public WindowSettings {
        if (length < 1 || slidingInterval < 1) {
            throw new IllegalArgumentException(
                    "length and slidingInterval must be positive, were " + length + " and " + slidingInterval);
        }
    }

    /** Whether every message is in exactly one window. */
    public boolean tumbling() {
        return length == slidingInterval;
    }

    /** A time window's length. */
    public Duration lengthDuration() {
        return Duration.ofMillis(length);
    }

    /** A time window's sliding interval. */
    public Duration slidingDuration() {
        return Duration.ofMillis(slidingInterval);
    }

    /** The {@code windowConfig} keys this was read from, for logs and {@code validate}. */
    public String describe() {
        String unit = byCount ? " messages" : " ms";
        return (tumbling() ? "tumbling" : "sliding") + " window of " + length + unit
                + (tumbling() ? "" : " every " + slidingInterval + unit);
    }
}
