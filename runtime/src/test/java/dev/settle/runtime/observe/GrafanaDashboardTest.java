package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboard in {@code docs/grafana} queries only what {@link SettleMetrics} exposes, so a renamed metric
 * breaks this test rather than a panel nobody looks at until an incident.
 */
class GrafanaDashboardTest {
    private static final Pattern QUERY =
            Pattern.compile("\"(expr|definition|query)\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern METRIC = Pattern.compile("\\b(?:settle|jvm|process)_[a-zA-Z0-9_:]*");
    private static final Pattern DATASOURCE_UID = Pattern.compile("\"uid\"\\s*:\\s*\"([^\"]*)\"");

    private static String dashboard;
    private static List<String> expressions;
    private static Set<String> exposed;

    @BeforeAll
    static void read() throws IOException {
        dashboard = Files.readString(dashboardFile());
        expressions = new ArrayList<>();
        Matcher query = QUERY.matcher(dashboard);
        while (query.find()) {
            expressions.add(query.group(2).replace("\\\"", "\"").replace("\\\\", "\\"));
        }
        SettleMetrics metrics = new SettleMetrics();
        metrics.forSubscription("orders");
        metrics.watchReceiverQueue("orders", () -> 0);
        metrics.watchConnection("orders", () -> true);
        metrics.buildInfo("1.0.0", "4.2.4");
        exposed = Exposition.of(metrics.registry()).sampleNames();
    }

    @Test
    void everyQueryNamesOnlyMetricsTheRuntimeExposes() {
        assertThat(expressions).isNotEmpty();
        for (String expression : expressions) {
            Matcher metric = METRIC.matcher(expression);
            while (metric.find()) {
                assertThat(exposed).as("metric in %s", expression).contains(metric.group());
            }
        }
    }

    @Test
    void panelsCoverTheSettlementPicture() {
        Set<String> queried = new TreeSet<>();
        for (String expression : expressions) {
            METRIC.matcher(expression).results().forEach(m -> queried.add(m.group()));
        }

        assertThat(queried)
                .contains(
                        "settle_outcomes_total",
                        "settle_deliveries_total",
                        "settle_handler_duration_seconds_bucket",
                        "settle_held_retries",
                        "settle_in_flight",
                        "settle_dead_lettered_total",
                        "settle_delivery_attempt_bucket",
                        "settle_receiver_queue_messages",
                        "settle_consumer_connected",
                        "settle_delivery_lag_seconds_bucket",
                        "jvm_memory_used_bytes");
        assertThat(expressions).anySatisfy(e -> assertThat(e).startsWith("histogram_quantile(0.99,"));
    }

    @Test
    void everySettleSelectorFollowsTheSubscriptionVariable() {
        Pattern selector = Pattern.compile("settle_[a-z_]+(\\{[^}]*})?");
        for (String expression : expressions) {
            if (expression.startsWith("label_values(")) {
                continue;
            }
            Matcher matcher = selector.matcher(expression);
            while (matcher.find()) {
                assertThat(matcher.group(1))
                        .as("selector %s in %s", matcher.group(), expression)
                        .contains("subscription=~\"$subscription\"");
            }
        }
    }

    @Test
    void everyQuerySelectsTheJobAndNamespaceSoOtherProcessesInThePrometheusStayOut() {
        Pattern selector = Pattern.compile("\\b(?:settle|jvm|process)_[a-z_]+(\\{[^}]*})?");
        for (String expression : expressions) {
            if (expression.startsWith("label_values(")) {
                continue;
            }
            Matcher matcher = selector.matcher(expression);
            while (matcher.find()) {
                assertThat(matcher.group(1))
                        .as("selector %s in %s", matcher.group(), expression)
                        .contains("job=~\"$job\"")
                        .contains("namespace=~\"$namespace\"");
            }
        }
    }

    @Test
    void variablesPickTheDataSourceAndTheSubscriptions() {
        assertThat(dashboard)
                .containsPattern("\"name\": \"datasource\",\\s*\"label\": \"Data source\",\\s*"
                        + "\"type\": \"datasource\",\\s*\"query\": \"prometheus\"");
        assertThat(expressions)
                .contains(
                        "label_values(settle_build_info, job)",
                        "label_values(settle_build_info{job=~\"$job\"}, namespace)",
                        "label_values(settle_deliveries_total{job=~\"$job\",namespace=~\"$namespace\"}, subscription)");
        Matcher uid = DATASOURCE_UID.matcher(dashboard);
        while (uid.find()) {
            assertThat(uid.group(1)).isIn("${datasource}", "-- Grafana --", "settle-runtime");
        }
    }

    private static Path dashboardFile() {
        // Surefire runs in the runtime module; the dashboard lives at the repository's root.
        Path here = Path.of("").toAbsolutePath();
        for (Path dir = here; dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("docs/grafana/settle-dashboard.json");
            if (Files.isRegularFile(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("docs/grafana/settle-dashboard.json not found above " + here);
    }
}
