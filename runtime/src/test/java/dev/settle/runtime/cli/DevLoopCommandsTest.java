package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command lines of {@code dev}, {@code produce} and {@code consume}, and the help texts of the others, without a
 * broker: what is refused before anything connects, with the exit codes the other commands use.
 */
class DevLoopCommandsTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int settle(String... args) {
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
    void validateHelpShowsTheManifestsVariableSyntaxNotNull() {
        // picocli reads ${VAR} in a description as a variable of its own, and printed "the manifest's null".
        assertThat(settle("validate", "--help")).isZero();
        assertThat(out()).contains("${VAR}").doesNotContain("null");
    }

    @Test
    void settleHelpSaysWhatExitOneMeansNowThatRunWaitsForPulsar() {
        // run waits a broker out (unready, alive) and no longer exits 1 for it.
        assertThat(settle("--help")).isZero();
        assertThat(out().replaceAll("\\s+", " "))
                .doesNotContain("run could not connect to Pulsar")
                .contains("1 something could not be reached or opened: a broker (produce, consume, dlq), the admin API"
                        + " (deploy, rollback, status), run's HTTP port, dev's ports; run waits for a broker it cannot"
                        + " reach instead");
    }

    @Test
    void theDevLoopCommandsAreListedWithTheirHelp() {
        assertThat(settle("--help")).isZero();
        assertThat(out()).contains("  dev ", "  produce ", "  consume ");
        for (String command : List.of("dev", "produce", "consume")) {
            out.reset();
            assertThat(settle(command, "--help")).as(command).isZero();
            assertThat(out()).as(command).contains("Usage: settle " + command, "Exit codes:", "64");
        }
    }

    @Test
    void devWithoutTheClonesBrokerSaysWhereToGetOneAndExitsOne() {
        System.clearProperty(DevCommand.BROKER_PROPERTY);
        assertThat(settle("dev")).isEqualTo(1);
        assertThat(err())
                .contains("comes with a clone of the Settle repository", "./settle dev", "bin/pulsar standalone");
    }

    @Test
    void devRefusesAPortInUseNamingTheFlagThatChangesIt(@TempDir Path folder) throws Exception {
        System.setProperty(DevCommand.BROKER_PROPERTY, folder.toString());
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThat(settle(
                            "dev",
                            "--port",
                            "0",
                            "--http-port",
                            Integer.toString(taken.getLocalPort()),
                            "--data",
                            folder.resolve("data").toString()))
                    .isEqualTo(1);
            assertThat(err())
                    .contains("port " + taken.getLocalPort() + " (--http-port) is in use")
                    .contains("choose another with --http-port");
        } finally {
            System.clearProperty(DevCommand.BROKER_PROPERTY);
        }
    }

    @Test
    void producePropertyWithoutAnEqualsSignIsAUsageErrorNamingIt() {
        assertThat(settle("produce", "persistent://public/default/t", "--property", "origin", "x"))
                .isEqualTo(Main.USAGE);
        assertThat(err()).contains("--property must be NAME=VALUE, was 'origin'");
    }

    @Test
    void produceTakesAValueOrAFileNotBoth(@TempDir Path folder) throws Exception {
        Path file = Files.writeString(folder.resolve("payload.json"), "{}");
        assertThat(settle("produce", "t", "--file", file.toString(), "x")).isEqualTo(Main.USAGE);
        assertThat(err()).contains("not both");
    }

    @Test
    void produceRefusesAnUnknownSchemaAndACountBelowOne() {
        assertThat(settle("produce", "t", "--schema", "json", "x")).isEqualTo(Main.USAGE);
        assertThat(err()).contains("--schema must be bytes, string or auto, was 'json'");
        err.reset();
        assertThat(settle("produce", "t", "--count", "0", "x")).isEqualTo(Main.USAGE);
        assertThat(err()).contains("--count must be at least 1, was 0");
    }

    @Test
    void anHttpServiceUrlIsRefusedBeforeConnectingWithThePortToUse() {
        assertThat(settle("consume", "t", "--service-url", "http://localhost:8080"))
                .isEqualTo(Main.USAGE);
        assertThat(err()).contains("must be a pulsar:// or pulsar+ssl:// URL", "6650", "was 'http://localhost:8080'");
    }

    @Test
    void aManifestAndAServiceUrlTogetherAreAUsageError(@TempDir Path folder) {
        assertThat(settle(
                        "produce",
                        "t",
                        "--manifest",
                        folder.resolve("settle.yaml").toString(),
                        "--service-url",
                        "pulsar://localhost:6650",
                        "x"))
                .isEqualTo(Main.USAGE);
        assertThat(err()).contains("use one or the other");
    }

    @Test
    void aManifestThatIsRefusedIsExitTwoWithItsProblems(@TempDir Path folder) throws Exception {
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), "pulsar:\n  serviceUrl: 7\n  colour: red\n");
        assertThat(settle("consume", "t", "--manifest", manifest.toString())).isEqualTo(Main.INVALID);
        assertThat(err()).contains("settle.yaml:3:3: pulsar.colour");
    }

    @Test
    void produceConsumeAndDlqToABrokerThatIsNotThereSayHowToStartOneWithinSeconds(@TempDir Path folder)
            throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        String url = "pulsar://127.0.0.1:" + port;
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: %s
                subscriptions:
                  - name: orders
                    topics: [persistent://public/default/orders]
                    jar: not-built.jar
                    maxAttempts: 3
                    deadLetterTopic: persistent://public/default/orders-dlq
                """.formatted(url));
        for (List<String> command : List.of(
                List.of("produce", "persistent://public/default/t", "--service-url", url, "x"),
                List.of("consume", "persistent://public/default/t", "--service-url", url, "--timeout", "60"),
                List.of("dlq", "list", manifest.toString(), "orders"))) {
            out.reset();
            err.reset();
            long started = System.nanoTime();
            assertThat(settle(command.toArray(String[]::new))).as(err()).isEqualTo(1);
            double seconds = (System.nanoTime() - started) / 1e9;
            // Measured well under a second (a refused connection); the client alone took 33 s and a chain of four
            // exception class names.
            assertThat(seconds).as("%s answered in %.1f s", command, seconds).isLessThan(15);
            assertThat(err())
                    .as(String.join(" ", command))
                    .contains("cannot reach the broker at " + url + " (127.0.0.1:" + port + ": connection refused)")
                    .contains("is `settle dev` (or another Pulsar) running there?")
                    .doesNotContain("Exception");
        }
    }

    @Test
    void anUnknownCommandIsOneLineWithWhatToTypeAndExit64() {
        assertThat(settle("foo")).isEqualTo(Main.USAGE);
        assertThat(err().lines().toList())
                .containsExactly(
                        "settle: unknown command 'foo'; the commands are validate, preflight, run, deploy,"
                                + " rollback, status, dev, produce, consume, dlq, held, trace, help (settle --help lists them)");
        err.reset();
        assertThat(settle("valdate", "x.yaml")).isEqualTo(Main.USAGE);
        assertThat(err().lines().toList())
                .containsExactly(
                        "settle: unknown command 'valdate'; did you mean validate? (settle --help lists them)");
    }
}
