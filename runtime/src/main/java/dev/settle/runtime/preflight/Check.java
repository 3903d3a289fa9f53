package dev.settle.runtime.preflight;

import java.util.Objects;

/**
 * One check of one subscription (or of the manifest's {@code admin:} section) against the broker.
 *
 * @param scope the subscription's name, or {@code admin} for the code store
 * @param name what was checked, such as {@code transaction-coordinator}
 * @param verdict what was found
 * @param asked whether the manifest asks for the guarantee this check serves: only a failed check that was asked
 *     for refuses
 * @param detail what was found, in words: the setting, the permission, and what to do
 */
public record Check(String scope, String name, Verdict verdict, boolean asked, String detail) {
    public Check {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(detail, "detail");
    }

    static Check ok(String scope, String name, String detail) {
        return new Check(scope, name, Verdict.OK, false, detail);
    }

    static Check failed(String scope, String name, boolean asked, String detail) {
        return new Check(scope, name, Verdict.FAILED, asked, detail);
    }

    static Check couldNotCheck(String scope, String name, String detail) {
        return new Check(scope, name, Verdict.COULD_NOT_CHECK, false, detail);
    }

    /** Failed, for a guarantee the manifest asks for. */
    public boolean refuses() {
        return verdict == Verdict.FAILED && asked;
    }

    /** One line: {@code orders  transaction-coordinator  failed (refuses): ...}. */
    /** Whether it was not made only because the manifest has no {@code pulsar.adminUrl} to ask. */
    public boolean needsAdminUrl() {
        return verdict == Verdict.COULD_NOT_CHECK && detail.contains(BrokerPreflight.NO_ADMIN_URL);
    }

    public String line() {
        String label = verdict == Verdict.FAILED ? (asked ? "failed (refuses)" : "failed (warning)") : verdict.label();
        return scope + "  " + name + "  " + label + ": " + detail;
    }
}
