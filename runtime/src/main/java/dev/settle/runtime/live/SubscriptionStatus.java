package dev.settle.runtime.live;

import java.util.List;

/**
 * A subscription's code: the running generation and the kept ones (newest first), the running one among them.
 */
public record SubscriptionStatus(String subscription, GenerationRecord active, List<GenerationRecord> kept) {
    public SubscriptionStatus {
        kept = List.copyOf(kept);
    }
}
