package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.pulsar.PulsarVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line behaves as its peers': version, help, both option spellings, and distinct exit codes. */
class CommandLineTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int settle(String... args) {
        return Main.execute(
                List.of(args),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                ValidateGoldenTest.ENVIRONMENT);
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void versionNamesSettleThePulsarClientAndJavaFromTheBuildNotFromTheSource() throws IOException {
        assertThat(settle("--version")).isZero();

        String pom = Files.readString(Path.of("pom.xml"));
        String projectVersion = pom.substring(
                pom.indexOf("<version>", pom.indexOf("<parent>")) + 9,
                pom.indexOf("</version>", pom.indexOf("<parent>")));
        assertThat(out().lines())
                .containsExactly(
                        "settle " + projectVersion,
                        "pulsar client " + PulsarVersion.getVersion(),
                        "java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ", "
                                + System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version")
                                + ")");
        assertThat(PulsarVersion.getVersion()).isEqualTo("4.2.4");
        assertThat(err()).isEmpty();
    }

    @Test
    void helpListsTheCommandsAndEveryExitCode() {
        assertThat(settle("help")).isZero();

        assertThat(out())
                .contains("Usage: settle", "validate", "run", "help", "--version")
                .contains("0   ", "2   ", "64  ", "70  ");
        assertThat(out().lines().filter(line -> line.matches("\\s+(0|1|2|64|70)\\s+\\S.*")))
                .hasSize(5);
    }

    @Test
    void helpOnACommandPrintsThatCommandsUsageAndReadsNoFile() {
        assertThat(settle("validate", "--help")).isZero();
        assertThat(out()).contains("Usage: settle validate", "--env-file=FILE", "--skip-jar-check");
        assertThat(err()).isEmpty();

        out.reset();
        assertThat(settle("help", "run")).isZero();
        assertThat(out()).contains("Usage: settle run", "--log-format=text|json");
    }

    @Test
    void anOptionTakesItsValueAfterAnEqualsSignOrASpace(@TempDir Path folder) throws IOException {
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: ${PULSAR_URL}
                subscriptions:
                  - name: orders
                    topics: [orders]
                    jar: orders.jar
                """);
        TestJar.orderHandler(folder.resolve("orders.jar"));
        Path env = Files.writeString(folder.resolve("check.env"), "PULSAR_URL=pulsar://from-env-file:6650\n");

        assertThat(settle("validate", "--env-file=" + env, manifest.toString()))
                .as(err())
                .isZero();
        assertThat(out()).contains("serviceUrl: pulsar://from-env-file:6650");
        out.reset();
        assertThat(settle("validate", "--env-file", env.toString(), manifest.toString()))
                .as(err())
                .isZero();
        assertThat(out()).contains("serviceUrl: pulsar://from-env-file:6650");
    }

    @Test
    void runWithAnUnknownLogFormatIsAUsageErrorNamingTheValue() {
        assertThat(settle("run", "--log-format=yaml", "settle.yaml")).isEqualTo(Main.USAGE);

        assertThat(err())
                .startsWith("settle: --log-format: must be 'text' or 'json', was 'yaml'")
                .contains("Usage: settle run");
    }

    @Test
    void noCommandAnUnknownCommandOrAnUnknownOptionIsAUsageError() {
        assertThat(settle()).isEqualTo(Main.USAGE);
        assertThat(err()).startsWith("settle: no command given").contains("Usage: settle");

        err.reset();
        assertThat(settle("valdiate", "x.yaml")).isEqualTo(Main.USAGE);
        assertThat(err())
                .isEqualToIgnoringNewLines(
                        "settle: unknown command 'valdiate'; did you mean validate? (settle --help lists them)");

        err.reset();
        assertThat(settle("validate", "--skip-jars", "x.yaml")).isEqualTo(Main.USAGE);
        assertThat(err()).startsWith("settle: Unknown option: '--skip-jars'").contains("--skip-jar-check");
    }

    @Test
    void theExitCodesAreTheDocumentedNumbers() {
        assertThat(List.of(Main.INVALID, Main.USAGE, Main.FATAL)).containsExactly(2, 64, 70);
    }
}
