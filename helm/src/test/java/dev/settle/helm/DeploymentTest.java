package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The Deployment, ConfigMap, Service and PodDisruptionBudget rendered from the default values. */
class DeploymentTest {
    /** The runtime's default drain grace (manifest shutdown.grace): the grace period must outlast it. */
    private static final int DRAIN_GRACE_SECONDS = 20;

    private final Rendered rendered = SettleChart.render();

    @TempDir
    Path scratch;

    @Test
    void runtimeContainerRunsTheMountedManifest() {
        Map<String, Object> container = rendered.runtimeContainer();

        assertThat(container.get("args")).isEqualTo(List.of("run", "/etc/settle/manifest.yaml"));
        assertThat(Rendered.mount(container, "manifest"))
                .containsEntry("mountPath", "/etc/settle")
                .containsEntry("readOnly", true);
        assertThat(rendered.volume("manifest").orElseThrow())
                .extracting(volume -> Yamls.at(volume, "configMap").get("name"))
                .isEqualTo(Yamls.at(rendered.one("ConfigMap"), "metadata").get("name"));
    }

    @Test
    void runtimeKnowsItsPodNameFromTheDownwardApiInEveryScenario() {
        List<Rendered> renders = new ArrayList<>(List.of(rendered));
        scenarios().forEach(scenario -> renders.add(SettleChart.render(scenario)));

        for (Rendered each : renders) {
            assertThat(Rendered.env(each.runtimeContainer()))
                    .as("dead letters and the journal name the pod by POD_NAME (HOSTNAME is not it with hostname: set)")
                    .containsEntry("POD_NAME", Map.of("fieldRef", Map.of("fieldPath", "metadata.name")));
        }
    }

    @Test
    void configMapHoldsTheManifestFromValues() {
        Map<String, Object> manifest = rendered.manifest();

        assertThat(Yamls.at(manifest, "pulsar"))
                .containsEntry("serviceUrl", "pulsar://pulsar-broker.pulsar.svc.cluster.local:6650");
        List<Object> subscriptions = Yamls.list(manifest.get("subscriptions"), "subscriptions");
        assertThat(subscriptions).hasSize(1);
        assertThat(Yamls.map(subscriptions.get(0), "subscriptions[0]"))
                .containsEntry("name", "orders-processor")
                .containsEntry("topics", List.of("persistent://public/default/orders"))
                .containsEntry("type", "Shared")
                .containsEntry("handler", "dev.settle.examples.orders.OrderHandler")
                .containsEntry("jar", "/opt/settle/examples/settle-examples.jar")
                .containsEntry("maxAttempts", 5)
                .containsEntry("deadLetterTopic", "persistent://public/default/orders-dlq");
    }

    @Test
    void changingTheManifestRollsThePodsThroughTheChecksumAnnotation() {
        Rendered changed = SettleChart.render(scratch, """
                manifest:
                  subscriptions:
                    - name: orders-processor
                      topics: [persistent://public/default/orders]
                      jar: /opt/settle/examples/settle-examples.jar
                      concurrency: 8
                """);

        String before = (String) rendered.podAnnotations().get("checksum/manifest");
        String after = (String) changed.podAnnotations().get("checksum/manifest");
        assertThat(before).matches("[0-9a-f]{64}");
        assertThat(after).matches("[0-9a-f]{64}").isNotEqualTo(before);
        assertThat(SettleChart.render().podAnnotations().get("checksum/manifest"))
                .as("the same manifest gives the same checksum")
                .isEqualTo(before);
    }

    @Test
    void probesPointAtLivezAndReadyzOnTheHttpPort() {
        Map<String, Object> container = rendered.runtimeContainer();

        assertThat(Yamls.at(container, "livenessProbe", "httpGet"))
                .containsEntry("path", "/livez")
                .containsEntry("port", "http");
        assertThat(Yamls.at(container, "readinessProbe", "httpGet"))
                .containsEntry("path", "/readyz")
                .containsEntry("port", "http");
        assertThat(Yamls.at(container, "startupProbe", "httpGet"))
                .containsEntry("path", "/livez")
                .containsEntry("port", "http");
        assertThat(Yamls.list(container.get("ports"), "ports"))
                .containsExactly(Map.of("name", "http", "containerPort", 8080, "protocol", "TCP"));
    }

    @Test
    void containerPortServiceAndScrapeAnnotationFollowTheManifestHttpPort() {
        Rendered on9090 = SettleChart.render(scratch, """
                manifest:
                  http:
                    port: 9090
                """);

        assertThat(Yamls.list(on9090.runtimeContainer().get("ports"), "ports"))
                .containsExactly(Map.of("name", "http", "containerPort", 9090, "protocol", "TCP"));
        assertThat(Yamls.list(Yamls.at(on9090.one("Service"), "spec").get("ports"), "ports"))
                .containsExactly(Map.of("name", "http", "port", 9090, "targetPort", "http", "protocol", "TCP"));
        assertThat(on9090.podAnnotations()).containsEntry("prometheus.io/port", "9090");
    }

    @Test
    void podsCarryPrometheusScrapeAnnotationsForMetrics() {
        assertThat(rendered.podAnnotations())
                .containsEntry("prometheus.io/scrape", "true")
                .containsEntry("prometheus.io/port", "8080")
                .containsEntry("prometheus.io/path", "/metrics");
    }

    static List<Path> scenarios() {
        return SettleChart.scenarios();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyContainerRunsAsNonRootOnAReadOnlyRootFilesystem(Path scenario) {
        Rendered scenarioRendered = SettleChart.render(scenario);

        assertThat(scenarioRendered.podSpec().get("securityContext"))
                .isEqualTo(Map.of(
                        "runAsNonRoot", true,
                        "runAsUser", 10001,
                        "runAsGroup", 10001,
                        "fsGroup", 10001,
                        "seccompProfile", Map.of("type", "RuntimeDefault")));
        List<Map<String, Object>> containers = new ArrayList<>(scenarioRendered.initContainers());
        containers.add(scenarioRendered.runtimeContainer());
        assertThat(containers).allSatisfy(container -> {
            assertThat(Yamls.at(container, "securityContext"))
                    .containsEntry("runAsNonRoot", true)
                    .containsEntry("readOnlyRootFilesystem", true)
                    .containsEntry("allowPrivilegeEscalation", false)
                    .containsEntry("capabilities", Map.of("drop", List.of("ALL")));
            assertThat(Rendered.mount(container, "tmp")).containsEntry("mountPath", "/tmp");
        });
        assertThat(scenarioRendered.volume("tmp").orElseThrow()).containsKey("emptyDir");
    }

    @Test
    void gracePeriodIsTheRuntimesDrainPlusTenSeconds() {
        assertThat(rendered.podSpec().get("terminationGracePeriodSeconds")).isEqualTo(DRAIN_GRACE_SECONDS + 10);

        Rendered longer = SettleChart.render(scratch, """
                manifest:
                  shutdown:
                    grace: 2m
                """);
        assertThat(longer.podSpec().get("terminationGracePeriodSeconds")).isEqualTo(130);
        Rendered explicit = SettleChart.render(scratch, "terminationGracePeriodSeconds: 90\n");
        assertThat(explicit.podSpec().get("terminationGracePeriodSeconds")).isEqualTo(90);
    }

    @Test
    void sharedSubscriptionsRollOutOnePodAtATimeAndExclusiveOnesAreRecreated() {
        assertThat(Yamls.at(Yamls.at(rendered.one("Deployment"), "spec"), "strategy"))
                .isEqualTo(Map.of("type", "RollingUpdate"));

        for (String type : List.of("Exclusive", "Failover")) {
            Rendered single = SettleChart.render(scratch, """
                    manifest:
                      subscriptions:
                        - name: orders-processor
                          topics: [persistent://public/default/orders]
                          type: %s
                          jar: /opt/settle/examples/settle-examples.jar
                        - name: audit
                          topics: [persistent://public/default/audit]
                          jar: /opt/settle/examples/settle-examples.jar
                    """.formatted(type));
            assertThat(Yamls.at(Yamls.at(single.one("Deployment"), "spec"), "strategy"))
                    .as(type)
                    .isEqualTo(Map.of("type", "Recreate"));
        }

        Rendered chosen = SettleChart.render(scratch, """
                strategy:
                  type: RollingUpdate
                  rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
                """);
        assertThat(Yamls.at(Yamls.at(chosen.one("Deployment"), "spec"), "strategy"))
                .isEqualTo(
                        Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxSurge", 0, "maxUnavailable", 1)));
    }

    @Test
    void runtimeHasResourceRequestsAndAMemoryLimit() {
        Map<String, Object> resources = Yamls.at(rendered.runtimeContainer(), "resources");

        assertThat(Yamls.at(resources, "requests")).containsKeys("cpu", "memory");
        assertThat(Yamls.at(resources, "limits")).containsKey("memory");
    }

    @Test
    void disruptionBudgetCoversTheDeploymentsPods() {
        Map<String, Object> budget = rendered.one("PodDisruptionBudget");

        assertThat(Yamls.at(budget, "spec")).containsEntry("maxUnavailable", 1);
        assertThat(Yamls.at(budget, "spec", "selector")).isEqualTo(Yamls.at(rendered.deployment(), "spec", "selector"));
    }

    @Test
    void serviceSelectsTheDeploymentsPods() {
        assertThat(Yamls.at(rendered.one("Service"), "spec", "selector"))
                .isEqualTo(Yamls.at(rendered.deployment(), "spec", "selector", "matchLabels"));
    }

    @Test
    void defaultImageIsTheExamplesImageTheDockerfileBuilds() throws IOException {
        String version = SettleChart.projectVersion();
        String image = "settle/settle-runtime:" + version + "-examples";

        Map<String, Object> chart = Yamls.map(
                Rendered.yaml().load(Files.readString(SettleChart.directory().resolve("Chart.yaml"))), "Chart.yaml");
        assertThat(chart).containsEntry("appVersion", version);
        assertThat(rendered.runtimeContainer()).containsEntry("image", image);
        String dockerfile =
                Files.readString(SettleChart.repositoryRoot().resolve("Dockerfile"), StandardCharsets.UTF_8);
        assertThat(dockerfile.lines())
                .as("the Dockerfile documents the build command for the chart's default image")
                .anySatisfy(line -> assertThat(line).contains("docker build --target examples -t " + image + " "))
                .anySatisfy(
                        line -> assertThat(line).contains("docker build -t settle/settle-runtime:" + version + " "));
    }

    @Test
    void withoutExamplesTheDefaultTagIsTheProductionImage(@TempDir Path scratch) {
        Rendered production = SettleChart.render(scratch, """
                image:
                  examples: false
                """);

        assertThat(production.runtimeContainer())
                .containsEntry("image", "settle/settle-runtime:" + SettleChart.projectVersion());
    }

    @Test
    void aDigestPinsTheImage(@TempDir Path scratch) {
        String digest = "sha256:" + "0123456789abcdef".repeat(4);
        Rendered pinned = SettleChart.render(scratch, """
                image:
                  repository: registry.example.com/settle/settle-runtime
                  tag: "0.1.0"
                  examples: false
                  digest: %s
                """.formatted(digest));

        assertThat(pinned.runtimeContainer())
                .containsEntry("image", "registry.example.com/settle/settle-runtime:0.1.0@" + digest);
    }
}
