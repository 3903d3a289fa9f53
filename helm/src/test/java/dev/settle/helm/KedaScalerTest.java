package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * KEDA's Pulsar scaler reads {@code <adminURL>/admin/v2/persistent/<tenant>/<namespace>/<topic>/stats} and the
 * backlog of the subscription named exactly as its trigger says (kedacore/keda pkg/scalers/pulsar_scaler.go): each
 * trigger must name what the runtime consumes, with the thresholds as whole numbers and the manifest's credentials.
 */
class KedaScalerTest {
    private static final String MANIFEST = """
            keda:
              enabled: true
              adminURL: http://pulsar-broker.pulsar.svc.cluster.local:8080
              msgBacklogThreshold: "200"
              activationMsgBacklogThreshold: "5"
            manifest:
              subscriptions:
                - name: orders-processor
                  topics: [orders, acme/shop/payments, persistent://public/default/refunds]
                  type: Key_Shared
                  jar: /opt/settle/examples/settle-examples.jar
                - name: audit
                  topics: [persistent://public/default/orders]
                  jar: /opt/settle/examples/settle-examples.jar
            """;

    @TempDir
    Path scratch;

    @Test
    void eachTriggerReadsTheBacklogOfWhatTheRuntimeConsumes() throws IOException {
        Rendered rendered = SettleChart.render(scratch, MANIFEST);

        List<Map<String, Object>> metadata = triggers(rendered).stream()
                .map(trigger -> Yamls.at(trigger, "metadata"))
                .toList();
        Map<String, Object> common = Map.of(
                "adminURL", "http://pulsar-broker.pulsar.svc.cluster.local:8080",
                "isPartitionedTopic", "false",
                "msgBacklogThreshold", "200",
                "activationMsgBacklogThreshold", "5");
        assertThat(metadata)
                .containsExactly(
                        with(common, "orders-processor", "persistent://public/default/orders"),
                        with(common, "orders-processor", "persistent://acme/shop/payments"),
                        with(common, "orders-processor", "persistent://public/default/refunds"),
                        with(common, "audit", "persistent://public/default/orders"));
        assertThat(triggers(rendered))
                .allSatisfy(trigger -> assertThat(trigger).doesNotContainKey("authenticationRef"));
        assertThat(rendered.kinds()).doesNotContain("TriggerAuthentication");

        // The same names as the runtime consumes: settle validate on the rendered manifest prints them expanded.
        assertThat(metadata)
                .extracting(m -> m.get("subscription") + " " + m.get("topic"))
                .containsExactlyElementsOf(consumed(rendered.manifest()));
    }

    @Test
    void theManifestsTokenReachesTheScalerThroughATriggerAuthenticationOfTheChart() {
        Rendered rendered = SettleChart.render(scratch, MANIFEST + """
                  pulsar:
                    serviceUrl: pulsar+ssl://pulsar-broker.pulsar.svc.cluster.local:6651
                    authentication:
                      token: {env: PULSAR_TOKEN}
                secretEnv:
                  PULSAR_TOKEN: {secretName: pulsar-token, key: token}
                """);

        Map<String, Object> authentication = rendered.one("TriggerAuthentication");
        assertThat(authentication).containsEntry("apiVersion", "keda.sh/v1alpha1");
        assertThat(Yamls.at(authentication, "metadata"))
                .containsEntry("name", SettleChart.FULLNAME + "-keda")
                .containsEntry("namespace", SettleChart.NAMESPACE);
        assertThat(Yamls.at(authentication, "spec"))
                .isEqualTo(Map.of(
                        "secretTargetRef",
                        List.of(Map.of("parameter", "bearerToken", "name", "pulsar-token", "key", "token"))));
        assertThat(triggers(rendered)).hasSize(4).allSatisfy(trigger -> {
            assertThat(trigger).containsEntry("authenticationRef", Map.of("name", SettleChart.FULLNAME + "-keda"));
            assertThat(Yamls.at(trigger, "metadata")).containsEntry("authModes", "bearer");
        });
    }

    @Test
    void aTriggerAuthenticationNamedInValuesIsUsedInsteadOfTheChartsOwn() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("keda"));

        assertThat(rendered.kinds()).doesNotContain("TriggerAuthentication");
        assertThat(triggers(rendered))
                .allSatisfy(trigger ->
                        assertThat(trigger).containsEntry("authenticationRef", Map.of("name", "settle-pulsar-auth")));
    }

    @Test
    void aTokenFromAFileWithoutATriggerAuthenticationIsRefused() {
        assertThat(SettleChart.refusal(scratch, MANIFEST + """
                  pulsar:
                    serviceUrl: pulsar+ssl://pulsar-broker.pulsar.svc.cluster.local:6651
                    authentication:
                      token: {file: /var/run/secrets/pulsar/token}
                """))
                .contains("keda.enabled, and the manifest authenticates to Pulsar (manifest.pulsar.authentication:"
                        + " token), so the admin API will refuse KEDA's Pulsar scaler without credentials of its own."
                        + " With token: {env: NAME} and secretEnv.NAME the chart gives KEDA the same token; otherwise"
                        + " create a KEDA TriggerAuthentication (bearerToken for a token, or the scaler's tls, basic or"
                        + " oauth parameters) and set keda.authenticationRef to its name and keda.authModes to its"
                        + " mode.");
    }

    @Test
    void authModesWithoutCredentialsAreRefused() {
        assertThat(SettleChart.refusal(
                        scratch, MANIFEST.replace("  enabled: true\n", "  enabled: true\n  authModes: bearer\n")))
                .contains("keda.authModes is 'bearer' but keda.authenticationRef is empty: the scaler would have no"
                        + " credentials to send. Set keda.authenticationRef to the TriggerAuthentication that holds"
                        + " them, or keda.authModes to \"\".");
    }

    @Test
    void aNonPersistentTopicIsRefused() {
        assertThat(SettleChart.refusal(
                        scratch, MANIFEST.replace("[orders, acme", "[non-persistent://public/default/ticks, acme")))
                .contains("keda.enabled reads the backlog of persistent topics, but manifest.subscriptions[0]"
                        + " (orders-processor) lists 'non-persistent://public/default/ticks': write"
                        + " persistent://tenant/namespace/topic (or a short name Settle expands: topic, or"
                        + " tenant/namespace/topic). A non-persistent topic keeps no backlog to scale on.");
    }

    @Test
    void aSubscriptionNameFromTheEnvironmentIsRefused() {
        assertThat(SettleChart.refusal(scratch, MANIFEST.replace("name: audit", "name: ${AUDIT_SUBSCRIPTION}")))
                .contains("keda.enabled needs the subscription's name as Pulsar knows it, but"
                        + " manifest.subscriptions[1] (${AUDIT_SUBSCRIPTION}) takes it from the environment: the"
                        + " scaler would look for a subscription called '${AUDIT_SUBSCRIPTION}'. Write the name out.");
    }

    @Test
    void aThresholdThatIsNotAWholeNumberIsRefused() {
        assertThat(SettleChart.refusal(scratch, MANIFEST.replace("\"200\"", "\"1k\"")))
                .contains("keda.msgBacklogThreshold is '1k': the Pulsar scaler reads it as a whole number of"
                        + " messages (the backlog each replica should have on average). Write one, e.g. \"1000\".");
        assertThat(SettleChart.refusal(scratch, MANIFEST.replace("\"200\"", "\"0\"")))
                .contains("keda.msgBacklogThreshold is 0");
        assertThat(SettleChart.refusal(scratch, MANIFEST.replace("\"5\"", "\"-1\"")))
                .contains("keda.activationMsgBacklogThreshold is '-1'");
    }

    private static List<Map<String, Object>> triggers(Rendered rendered) {
        return Yamls.list(Yamls.at(rendered.one("ScaledObject"), "spec").get("triggers"), "triggers").stream()
                .map(trigger -> Yamls.map(trigger, "a trigger"))
                .toList();
    }

    private static Map<String, Object> with(Map<String, Object> common, String subscription, String topic) {
        Map<String, Object> metadata = new java.util.LinkedHashMap<>(common);
        metadata.put("subscription", subscription);
        metadata.put("topic", topic);
        return metadata;
    }

    /** {@code "<subscription> <topic>"} for each topic of each subscription, as {@code settle validate} prints them. */
    private List<String> consumed(Map<String, Object> manifest) throws IOException {
        Path file = scratch.resolve("manifest.yaml");
        Files.writeString(file, Rendered.yaml().dump(manifest), StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.execute(
                List.of("validate", "--skip-jar-check", file.toString()),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(exit).as("settle validate%n%s%n%s", printed, err).isZero();
        List<String> consumed = new ArrayList<>();
        String subscription = null;
        for (String line : printed.split("\n")) {
            if (line.startsWith("subscription ")) {
                subscription = line.substring("subscription ".length(), line.indexOf(" ("));
            } else if (line.startsWith("  topics: ")) {
                for (String topic : line.substring("  topics: ".length()).split(", ")) {
                    consumed.add(subscription + " " + topic);
                }
            }
        }
        return consumed;
    }
}
