package dev.settle.runtime.manifest;

import java.util.Objects;

/** A value that must never be printed: every {@code toString} shows {@code [REDACTED]}. */
public final class Secret {
    private final String value;

    public Secret(String value) {
        this.value = Objects.requireNonNull(value, "value");
    }

    /** The secret itself, for the one place that hands it to Pulsar. */
    public String reveal() {
        return value;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Secret secret && secret.value.equals(value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public String toString() {
        return "[REDACTED]";
    }
}
