package dev.settle.runtime.live;

import java.util.List;
import java.util.Optional;

/**
 * A subscription's code: the running generation and the kept ones (newest first), the running one among them; with
 * the Pulsar store also the generation every runtime is to run ({@code desired}), why this runtime does not run it
 * ({@code problem}), and what each runtime says it runs ({@code fleet}, empty with the disk store); {@code reload} says
 * why the last manifest reload could not change the subscription, which runs on as it was (empty when it could).
 */
public record SubscriptionStatus(
        String subscription,
        GenerationRecord active,
        List<GenerationRecord> kept,
        int desired,
        Optional<String> problem,
        List<FleetRecords.Report> fleet,
        Optional<String> reload) {
    public SubscriptionStatus {
        kept = List.copyOf(kept);
        fleet = List.copyOf(fleet);
    }

    SubscriptionStatus withFleet(List<FleetRecords.Report> reports) {
        return new SubscriptionStatus(subscription, active, kept, desired, problem, reports, reload);
    }
}
