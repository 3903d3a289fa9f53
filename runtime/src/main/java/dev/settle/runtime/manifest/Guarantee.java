package dev.settle.runtime.manifest;

import java.util.Arrays;
import java.util.Optional;

/**
 * What a subscription promises about a delivery's outputs and its acknowledgement (docs/exactly-once.md): the
 * manifest's {@code guarantee}.
 */
public enum Guarantee {
    /**
     * Outputs are stored before the input is acknowledged; a crash between the two sends the input again, and its
     * outputs a second time. Costs nothing beyond the sends and the acknowledgement.
     */
    AT_LEAST_ONCE("at-least-once"),
    /**
     * A delivery's outputs and its acknowledgement are one Pulsar transaction: all of them are stored, or none.
     * Needs the brokers' transaction coordinator.
     */
    EXACTLY_ONCE("exactly-once");

    private final String manifestName;

    Guarantee(String manifestName) {
        this.manifestName = manifestName;
    }

    /** The spelling in the manifest, such as {@code exactly-once}. */
    public String manifestName() {
        return manifestName;
    }

    public static Optional<Guarantee> fromManifestName(String name) {
        return Arrays.stream(values())
                .filter(guarantee -> guarantee.manifestName.equals(name))
                .findFirst();
    }
}
