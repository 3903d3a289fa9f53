package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Prometheus Operator monitors, the HorizontalPodAutoscaler and KEDA: each off by default. */
class IntegrationsTest {

    @Test
    void integrationsAreOffByDefault() {
        assertThat(SettleChart.render().kinds())
                .doesNotContain(
                        "PodMonitor", "ServiceMonitor", "HorizontalPodAutoscaler", "ScaledObject", "NetworkPolicy");
    }

    @Test
    void networkPolicyAdmitsTheScrapersNamespaceToTheMetricsPortAndNothingElse() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("networkpolicy"));

        Map<String, Object> policy = rendered.one("NetworkPolicy");
        assertThat(policy).containsEntry("apiVersion", "networking.k8s.io/v1");
        assertThat(Yamls.at(policy, "spec", "podSelector"))
                .isEqualTo(Yamls.at(rendered.deployment(), "spec", "selector"));
        assertThat(Yamls.at(policy, "spec").get("policyTypes")).isEqualTo(List.of("Ingress"));
        // One rule: from Prometheus's pods in its namespace, to the port named http. The admin port is in no rule,
        // so it is admitted from nowhere.
        assertThat(Yamls.at(policy, "spec").get("ingress"))
                .isEqualTo(List.of(Map.of(
                        "from",
                        List.of(Map.of(
                                "namespaceSelector",
                                Map.of("matchLabels", Map.of("kubernetes.io/metadata.name", "monitoring")),
                                "podSelector",
                                Map.of("matchLabels", Map.of("app.kubernetes.io/name", "prometheus")))),
                        "ports",
                        List.of(Map.of("port", "http", "protocol", "TCP")))));
    }

    @Test
    void podMonitorScrapesMetricsFromTheHttpPortOfThePods() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("monitoring"));

        Map<String, Object> monitor = rendered.one("PodMonitor");
        assertThat(Yamls.at(monitor, "metadata", "labels")).containsEntry("release", "kube-prometheus-stack");
        assertThat(Yamls.at(monitor, "spec", "selector"))
                .isEqualTo(Yamls.at(rendered.deployment(), "spec", "selector"));
        assertThat(Yamls.list(Yamls.at(monitor, "spec").get("podMetricsEndpoints"), "podMetricsEndpoints"))
                .containsExactly(Map.of("port", "http", "path", "/metrics", "interval", "15s", "scrapeTimeout", "10s"));
        assertThat(Yamls.at(monitor, "spec", "namespaceSelector")).isEqualTo(Map.of("matchNames", List.of("apps")));
        assertThat(rendered.kinds()).doesNotContain("ServiceMonitor");
    }

    @Test
    void serviceMonitorScrapesMetricsThroughTheService() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("servicemonitor"));

        Map<String, Object> monitor = rendered.one("ServiceMonitor");
        assertThat(Yamls.at(monitor, "spec", "selector", "matchLabels"))
                .isEqualTo(Yamls.at(rendered.one("Service"), "spec", "selector"));
        assertThat(Yamls.list(Yamls.at(monitor, "spec").get("endpoints"), "endpoints"))
                .containsExactly(Map.of("port", "http", "path", "/metrics", "interval", "30s", "scrapeTimeout", "10s"));
        assertThat(rendered.podAnnotations()).doesNotContainKeys("prometheus.io/scrape", "prometheus.io/port");
    }

    @Test
    void horizontalPodAutoscalerOwnsTheReplicaCount() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("hpa"));

        Map<String, Object> hpa = rendered.one("HorizontalPodAutoscaler");
        assertThat(Yamls.at(hpa, "spec", "scaleTargetRef"))
                .containsEntry("kind", "Deployment")
                .containsEntry("name", SettleChart.FULLNAME);
        assertThat(Yamls.at(hpa, "spec")).containsEntry("minReplicas", 2).containsEntry("maxReplicas", 6);
        assertThat(Yamls.at(rendered.deployment(), "spec")).doesNotContainKey("replicas");
        assertThat(Yamls.at(rendered.one("PodDisruptionBudget"), "spec"))
                .containsEntry("minAvailable", 1)
                .doesNotContainKey("maxUnavailable");
    }

    /** Without {@code keda.adminURL}, the scaler reads the stats where the runtime's own admin URL points. */
    @Test
    void kedaReadsTheBacklogFromTheManifestsAdminUrlUnlessToldOtherwise(@TempDir Path scratch) {
        String manifest = """
                manifest:
                  pulsar:
                    serviceUrl: pulsar://brokers.example:6650
                    adminUrl: http://brokers.example:8080
                keda:
                  enabled: true
                """;
        assertThat(firstTrigger(SettleChart.render(scratch, manifest)))
                .containsEntry("adminURL", "http://brokers.example:8080");
        assertThat(firstTrigger(SettleChart.render(scratch, manifest + "  adminURL: http://stats.example:8080\n")))
                .containsEntry("adminURL", "http://stats.example:8080");
    }

    private static Map<String, Object> firstTrigger(Rendered rendered) {
        Object triggers = Yamls.at(rendered.one("ScaledObject"), "spec").get("triggers");
        return Yamls.at(Yamls.map(Yamls.list(triggers, "triggers").get(0), "a trigger"), "metadata");
    }

    @Test
    void kedaScalesOnTheBacklogOfEverySubscriptionAndTopic() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("keda"));

        Map<String, Object> scaled = rendered.one("ScaledObject");
        assertThat(scaled).containsEntry("apiVersion", "keda.sh/v1alpha1");
        assertThat(Yamls.at(scaled, "spec", "scaleTargetRef")).containsEntry("name", SettleChart.FULLNAME);
        assertThat(Yamls.at(scaled, "spec")).containsEntry("minReplicaCount", 1).containsEntry("maxReplicaCount", 8);
        List<Map<String, Object>> triggers = Yamls.list(Yamls.at(scaled, "spec").get("triggers"), "triggers").stream()
                .map(trigger -> Yamls.map(trigger, "a trigger"))
                .toList();
        assertThat(triggers).allSatisfy(trigger -> {
            assertThat(trigger)
                    .containsEntry("type", "pulsar")
                    .containsEntry("authenticationRef", Map.of("name", "settle-pulsar-auth"));
            assertThat(Yamls.at(trigger, "metadata"))
                    .containsEntry("adminURL", "http://pulsar-broker.pulsar.svc.cluster.local:8080")
                    .containsEntry("msgBacklogThreshold", "500")
                    .containsEntry("authModes", "bearer");
        });
        assertThat(triggers)
                .extracting(trigger -> Yamls.at(trigger, "metadata").get("subscription") + " "
                        + Yamls.at(trigger, "metadata").get("topic"))
                .containsExactly(
                        "orders-processor persistent://public/default/orders",
                        "orders-processor persistent://public/default/orders-priority",
                        "payments persistent://public/default/payments");
        assertThat(Yamls.at(rendered.deployment(), "spec")).doesNotContainKey("replicas");
        assertThat(rendered.kinds()).doesNotContain("HorizontalPodAutoscaler");
    }
}
