package dev.settle.runtime.manifest;

import java.util.Arrays;
import java.util.Optional;

/**
 * Whether a retry keeps its key's order (docs/concepts.md, "Key-ordered retries"): the manifest's {@code order}. Absent,
 * the subscription type decides ({@link #defaultFor}).
 */
public enum RetryOrder {
    /**
     * While a message of a key waits for its retry, the key's later messages wait behind it in the runtime; other keys
     * go on.
     */
    KEY("key"),
    /** A retry lets the key's later messages pass it, as Pulsar does. */
    NONE("none");

    private final String manifestName;

    RetryOrder(String manifestName) {
        this.manifestName = manifestName;
    }

    /** The spelling in the manifest, such as {@code key}. */
    public String manifestName() {
        return manifestName;
    }

    /**
     * The order of a subscription of {@code type} that does not say: {@code key} on Key_Shared (the type chosen for key
     * order), {@code none} on the others (Shared keeps no order; Exclusive and Failover rewind on a retry).
     */
    public static RetryOrder defaultFor(SubscriptionKind type) {
        return type == SubscriptionKind.KEY_SHARED ? KEY : NONE;
    }

    public static Optional<RetryOrder> fromManifestName(String name) {
        return Arrays.stream(values())
                .filter(order -> order.manifestName.equals(name))
                .findFirst();
    }
}
