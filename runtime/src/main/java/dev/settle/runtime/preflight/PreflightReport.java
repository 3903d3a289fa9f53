package dev.settle.runtime.preflight;

import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/** Every check of a manifest against the broker, in the manifest's order. */
public record PreflightReport(List<Check> checks) {
    public PreflightReport {
        checks = List.copyOf(checks);
    }

    /** Whether a check failed for a guarantee the manifest asks for. */
    public boolean refuses() {
        return checks.stream().anyMatch(Check::refuses);
    }

    /**
     * Why a subscription cannot keep its promises on this broker, the details of its refusing checks (and of the
     * code store's) joined; empty when nothing refuses it.
     */
    public Optional<String> refusalOf(String subscription) {
        String reasons = checks.stream()
                .filter(Check::refuses)
                .filter(check ->
                        check.scope().equals(subscription) || check.scope().equals(BrokerPreflight.ADMIN))
                .map(check -> "preflight " + check.name() + " failed: " + check.detail())
                .collect(Collectors.joining("; "));
        return reasons.isEmpty() ? Optional.empty() : Optional.of(reasons);
    }

    /** One line a check. */
    public String text() {
        return checks.stream().map(Check::line).collect(Collectors.joining("\n", "", checks.isEmpty() ? "" : "\n"));
    }
}
