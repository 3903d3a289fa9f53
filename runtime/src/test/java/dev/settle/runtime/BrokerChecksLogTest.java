package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.preflight.Check;
import dev.settle.runtime.preflight.PreflightReport;
import dev.settle.runtime.preflight.Verdict;
import java.util.List;
import org.junit.jupiter.api.Test;

/** At {@code settle run}, the checks not made for want of {@code pulsar.adminUrl} are one log line, not one each. */
class BrokerChecksLogTest {
    @Test
    void theChecksThatNeedTheAdminUrlAreNamedOnOneLine() {
        PreflightReport report = new PreflightReport(List.of(
                new Check(
                        "orders",
                        "input-topic",
                        Verdict.COULD_NOT_CHECK,
                        false,
                        "persistent://public/default/orders was not checked: pulsar.adminUrl is not set (preflight"
                                + " asks the broker's admin API)"),
                new Check("orders", "dead-letter-topic", Verdict.OK, false, "writable"),
                new Check(
                        "orders",
                        "transaction-coordinator",
                        Verdict.COULD_NOT_CHECK,
                        false,
                        "pulsar.adminUrl is not set (the broker's settings are read from its admin API)"),
                new Check(
                        "payments",
                        "output-schema",
                        Verdict.COULD_NOT_CHECK,
                        false,
                        "not allowed to read the schema (needs the tenant's admin role)")));

        assertThat(BrokerChecks.withoutAdminUrl(report))
                .hasValue("2 checks were not made, as pulsar.adminUrl is not set (they ask the broker's admin API; set"
                        + " it to have them made): orders input-topic, orders transaction-coordinator");
    }

    @Test
    void withTheAdminUrlThereIsNoSuchLine() {
        PreflightReport report =
                new PreflightReport(List.of(new Check("orders", "input-topic", Verdict.OK, false, "exists")));

        assertThat(BrokerChecks.withoutAdminUrl(report)).isEmpty();
    }
}
