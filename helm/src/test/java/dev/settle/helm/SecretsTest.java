package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Secrets reach the pods only through Secret references; ConfigMaps never hold one. */
class SecretsTest {
    /** A JWT (three base64url parts, the first one a JSON header) such as a Pulsar token. */
    private static final Pattern JWT = Pattern.compile("eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*");

    @Test
    void pulsarTokenReachesTheRuntimeOnlyAsASecretKeyRef() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("jar-from-url"));

        Map<String, Object> env = Rendered.env(rendered.runtimeContainer());
        assertThat(env)
                .containsEntry("PULSAR_TOKEN", Map.of("secretKeyRef", Map.of("name", "pulsar-token", "key", "token")));
        assertThat(Yamls.at(rendered.manifest(), "pulsar", "authentication"))
                .as("the manifest names the variable, the runtime reads it at start")
                .isEqualTo(Map.of("token", Map.of("env", "PULSAR_TOKEN")));
    }

    static Stream<Path> everyScenario() {
        return SettleChart.scenarios().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyScenario")
    void noConfigMapHoldsATokenOrCredentials(Path scenario) {
        Rendered rendered = SettleChart.render(scenario);

        assertThat(rendered.kinds())
                .as("the chart creates no Secret: it references the user's")
                .doesNotContain("Secret");
        for (Map<String, Object> configMap : rendered.ofKind("ConfigMap")) {
            List<String> strings = new ArrayList<>(Yamls.strings(configMap));
            strings.addAll(Yamls.strings(rendered.manifest()));
            assertThat(strings).noneMatch(text -> JWT.matcher(text).find());
            assertThat(strings).noneMatch(text -> text.startsWith("data:"));
            assertThat(strings).noneMatch(text -> text.startsWith("token:") && !text.startsWith("token:$("));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyScenario")
    void everySecretLookingVariableComesFromASecretKeyRef(Path scenario) {
        Rendered rendered = SettleChart.render(scenario);

        List<Map<String, Object>> containers = new ArrayList<>(rendered.initContainers());
        containers.add(rendered.runtimeContainer());
        for (Map<String, Object> container : containers) {
            Rendered.env(container).forEach((name, value) -> {
                if (name.matches("(?i).*(TOKEN|PASSWORD|SECRET|CREDENTIAL|AUTHORIZATION).*")) {
                    assertThat(value)
                            .as("%s in %s", name, container.get("name"))
                            .isInstanceOf(Map.class);
                    assertThat(Yamls.map(value, name)).containsOnlyKeys("secretKeyRef");
                }
            });
        }
    }
}
