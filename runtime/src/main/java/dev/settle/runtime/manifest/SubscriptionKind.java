package dev.settle.runtime.manifest;

import java.util.Arrays;
import java.util.Optional;

/** The Pulsar subscription types, spelled as the manifest and Pulsar spell them. */
public enum SubscriptionKind {
    EXCLUSIVE("Exclusive"),
    FAILOVER("Failover"),
    SHARED("Shared"),
    KEY_SHARED("Key_Shared");

    private final String manifestName;

    SubscriptionKind(String manifestName) {
        this.manifestName = manifestName;
    }

    /** The spelling in the manifest, such as {@code Key_Shared}. */
    public String manifestName() {
        return manifestName;
    }

    /**
     * Whether the broker keeps a redelivery count on this type. Only Shared and Key_Shared do: on Exclusive and
     * Failover every message arrives with a count of zero, so a dead-letter cap would never fire.
     */
    public boolean countsRedeliveries() {
        return this == SHARED || this == KEY_SHARED;
    }

    public static Optional<SubscriptionKind> fromManifestName(String name) {
        return Arrays.stream(values())
                .filter(kind -> kind.manifestName.equals(name))
                .findFirst();
    }
}
