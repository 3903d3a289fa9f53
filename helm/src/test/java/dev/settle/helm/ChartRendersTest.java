package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.LintResult;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ChartRendersTest {

    @Test
    void chartLintsCleanInStrictMode() {
        LintResult result = SettleChart.lint();

        assertThat(result.isFailed())
                .as("lint failed: %s", result.getMessages())
                .isFalse();
        assertThat(result.getMessages())
                .as("strict lint reports nothing beyond the chart-icon recommendation")
                .allSatisfy(message -> assertThat(message).containsAnyOf("icon is recommended", "1 chart(s) linted"));
    }

    @Test
    void defaultValuesRenderTheRuntimeAndItsCompanions() {
        Rendered rendered = SettleChart.render();

        assertThat(rendered.kinds())
                .containsExactlyInAnyOrder(
                        "ServiceAccount", "ConfigMap", "Service", "Deployment", "PodDisruptionBudget");
    }

    @Test
    void everyNamedScenarioIsThere() {
        assertThat(SettleChart.scenarios())
                .extracting(file -> file.getFileName().toString())
                .contains(
                        "jar-from-image-values.yaml",
                        "jar-from-url-values.yaml",
                        "jar-from-package-values.yaml",
                        "monitoring-values.yaml",
                        "keda-values.yaml");
    }

    static Stream<Path> scenarios() {
        return SettleChart.scenarios().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void everyScenarioRendersARunnableDeployment(Path scenario) {
        Rendered rendered = SettleChart.render(scenario);

        Map<String, Object> container = rendered.runtimeContainer();
        assertThat(container.get("args")).isEqualTo(List.of("run", "/etc/settle/manifest.yaml"));
        assertThat(rendered.manifest()).containsKeys("pulsar", "subscriptions");
        assertThat(rendered.one("Service")).isNotNull();
        assertThat(rendered.all())
                .allSatisfy(object -> assertThat(Yamls.at(object, "metadata", "labels"))
                        .containsEntry("app.kubernetes.io/instance", SettleChart.RELEASE)
                        .containsEntry("app.kubernetes.io/name", "settle"));
    }
}
