package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every object the chart renders, with the default values and with each {@code ci/*-values.yaml}, is valid
 * Kubernetes 1.29 and 1.31: checked against the API schema of that release (KubernetesApi), where an unknown field
 * fails. Custom resources (KEDA, Prometheus Operator) are outside the Kubernetes API and are named here.
 */
class KubernetesSchemaTest {
    /** The custom resources the chart can render: no Kubernetes schema knows them. */
    private static final List<String> CUSTOM_KINDS =
            List.of("ScaledObject", "TriggerAuthentication", "ServiceMonitor", "PodMonitor");

    static Stream<Arguments> versionsAndValues() {
        List<Arguments> cases = new ArrayList<>();
        for (String version : KubernetesApi.versions()) {
            cases.add(Arguments.of(version, "defaults"));
            for (Path scenario : SettleChart.scenarios()) {
                cases.add(Arguments.of(version, scenario.getFileName().toString()));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "Kubernetes {0}, {1}")
    @MethodSource("versionsAndValues")
    void everyRenderedObjectIsValidKubernetes(String version, String values) {
        KubernetesApi api = KubernetesApi.of(version);
        Rendered rendered = values.equals("defaults")
                ? SettleChart.render()
                : SettleChart.render(SettleChart.directory().resolve("ci").resolve(values));

        List<String> checked = new ArrayList<>();
        List<String> custom = new ArrayList<>();
        for (Map<String, Object> object : rendered.all()) {
            Optional<String> model = api.check(object);
            (model.isPresent() ? checked : custom).add((String) object.get("kind"));
        }

        assertThat(checked).as("built-in kinds checked against the schema").contains("Deployment", "Service");
        assertThat(custom).as("kinds left unchecked must be custom resources").isSubsetOf(CUSTOM_KINDS);
    }

    @ParameterizedTest(name = "Kubernetes {0}")
    @MethodSource("dev.settle.helm.KubernetesApi#versions")
    void aMisspeltFieldFailsTheSchemaCheck(String version) throws IOException {
        Map<String, Object> deployment = fixture("kubernetes/misspelt-field-deployment.yaml");

        assertThatThrownBy(() -> KubernetesApi.of(version).check(deployment))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("apps/v1 Deployment 'orders-settle' is not valid Kubernetes " + version)
                .hasMessageContaining("`imagePullPolicyy`")
                .hasMessageContaining("V1Container");
    }

    @ParameterizedTest(name = "Kubernetes {0}")
    @MethodSource("dev.settle.helm.KubernetesApi#versions")
    void theSameDeploymentSpelledRightPasses(String version) throws IOException {
        Map<String, Object> deployment = fixture("kubernetes/misspelt-field-deployment.yaml");
        @SuppressWarnings("unchecked")
        Map<String, Object> container = ((List<Map<String, Object>>)
                        Yamls.at(deployment, "spec", "template", "spec").get("containers"))
                .get(0);
        container.put("imagePullPolicy", container.remove("imagePullPolicyy"));

        assertThat(KubernetesApi.of(version).check(deployment)).contains("V1Deployment");
    }

    private static Map<String, Object> fixture(String resource) throws IOException {
        try (InputStream in = KubernetesSchemaTest.class.getClassLoader().getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            return Yamls.map(Rendered.yaml().load(in), resource);
        }
    }
}
