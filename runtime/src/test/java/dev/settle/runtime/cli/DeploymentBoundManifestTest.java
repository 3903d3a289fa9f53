package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A manifest written for a cluster (a token from the pod's environment, a JAR that exists only in the image) is
 * checked on a laptop with {@code --env-file} and {@code --skip-jar-check}, and the output never passes an
 * unchecked handler off as checked.
 */
class DeploymentBoundManifestTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @TempDir
    Path folder;

    private Path manifest;

    @BeforeEach
    void clusterManifest() throws IOException {
        manifest = Files.writeString(folder.resolve("manifest.yaml"), """
                pulsar:
                  serviceUrl: pulsar+ssl://pulsar.example.com:6651
                  authentication:
                    token: {env: PULSAR_TOKEN}
                subscriptions:
                  - name: orders-processor
                    topics: [persistent://acme/orders/created]
                    handler: com.acme.orders.OrderHandler
                    jar: /opt/settle/handlers/orders.jar
                    schema: json
                  - name: audit
                    topics: [persistent://acme/orders/created]
                    jar: /opt/settle/handlers/audit.jar
                    config:
                      region: ${REGION}
                """);
    }

    private int validate(String... args) {
        return Main.execute(
                List.of(args),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Map.of());
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void withoutTheDeploymentsVariablesAndJarsTheClusterManifestIsRefused() {
        assertThat(validate("validate", manifest.toString())).isEqualTo(Main.INVALID);

        assertThat(err().lines())
                .hasSize(4)
                .anySatisfy(line -> assertThat(line).contains("PULSAR_TOKEN"))
                .anySatisfy(line -> assertThat(line).contains("REGION"))
                .anySatisfy(line -> assertThat(line).contains("no file or folder at '/opt/settle/handlers/orders.jar'"))
                .anySatisfy(line -> assertThat(line).contains("no file or folder at '/opt/settle/handlers/audit.jar'"));
    }

    @Test
    void anEnvFileAndSkipJarCheckPassItAndEverySubscriptionSaysItsHandlerWasNotChecked() throws IOException {
        Path env = Files.writeString(folder.resolve("check.env"), """
                # what the pod will have
                PULSAR_TOKEN=placeholder-token

                REGION=eu-west-1
                """);

        assertThat(validate("validate", "--env-file", env.toString(), "--skip-jar-check", manifest.toString()))
                .as(err())
                .isZero();

        assertThat(out().lines().findFirst())
                .hasValue("manifest: " + manifest + " is valid; its handler JARs were not checked (--skip-jar-check)");
        assertThat(out().lines().filter(line -> line.startsWith("  handler: ")).toList())
                .containsExactly(
                        "  handler: com.acme.orders.OrderHandler (NOT CHECKED: --skip-jar-check, the JAR was not opened)",
                        "  handler: the one its JAR declares (NOT CHECKED: --skip-jar-check, the JAR was not opened)");
        assertThat(out().lines().filter(line -> line.startsWith("  jar: ")).toList())
                .containsExactly(
                        "  jar: /opt/settle/handlers/orders.jar (NOT CHECKED: not looked for)",
                        "  jar: /opt/settle/handlers/audit.jar (NOT CHECKED: not looked for)");
        assertThat(out().lines().filter(line -> line.startsWith("  schema: ")).toList())
                .containsExactly(
                        "  schema: json (declared; NOT CHECKED against the handler's type)",
                        "  schema: the handler's (NOT CHECKED: its type is known only from its JAR)");
        assertThat(out())
                .contains("authentication: token [REDACTED]", "region: [REDACTED] (from the environment)")
                .doesNotContain("placeholder-token", "eu-west-1");
        assertThat(err()).contains("--skip-jar-check: no handler JAR was opened");
    }

    @Test
    void skipJarCheckStillRefusesEveryOtherProblem() throws IOException {
        Files.writeString(manifest, Files.readString(manifest).replace("schema: json", "schema: jsn"));

        assertThat(validate("validate", "--skip-jar-check", manifest.toString()))
                .isEqualTo(Main.INVALID);

        assertThat(err().lines())
                .hasSize(3)
                .anySatisfy(line ->
                        assertThat(line).contains("subscriptions[0].schema").contains("'jsn'"))
                .noneSatisfy(line -> assertThat(line).contains("/opt/settle/handlers"));
    }

    @Test
    void anEnvFileLineThatIsNotNameEqualsValueIsRefusedAtItsLine() throws IOException {
        Path env = Files.writeString(folder.resolve("check.env"), "PULSAR_TOKEN=x\nexport REGION eu\n");

        assertThat(validate("validate", "--env-file=" + env, "--skip-jar-check", manifest.toString()))
                .isEqualTo(Main.INVALID);

        assertThat(err())
                .isEqualTo(env + ":2:1: (env file): must be NAME=value, was 'export REGION eu'; a name is"
                        + " letters, digits and _, and # starts a comment line\n");
    }

    @Test
    void aMissingEnvFileIsNamedAsTheEnvFileNotAsTheManifest() {
        Path missing = folder.resolve("nowhere.env");

        assertThat(validate("validate", "--env-file", missing.toString(), manifest.toString()))
                .isEqualTo(Main.INVALID);

        assertThat(err()).isEqualTo("settle: cannot read --env-file '" + missing + "': no such file\n");
    }

    @Test
    void theEnvFileWinsOverTheProcessEnvironmentAndKeepsTheRest() throws Exception {
        Path env = Files.writeString(folder.resolve("check.env"), "REGION=from-file\n");

        assertThat(EnvFile.over(Map.of("REGION", "from-process", "HOME", "/root"), env))
                .containsExactlyInAnyOrderEntriesOf(Map.of("REGION", "from-file", "HOME", "/root"));
        Files.writeString(env, "TOKEN=a=b \"quoted\"\n");
        assertThat(EnvFile.over(Map.of(), env)).containsExactly(Map.entry("TOKEN", "a=b \"quoted\""));
    }
}
