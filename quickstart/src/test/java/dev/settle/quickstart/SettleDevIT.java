package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code ./settle dev}, {@code ./settle produce} and {@code ./settle consume} as a user runs them from a clone: the
 * broker on the ports the flags give (free ones here: never 6650/8080, which others on this machine may hold), its
 * URLs printed, no broker stack trace on the terminal, and its topics, messages and subscriptions kept in
 * {@code --data} across a restart.
 */
// Not on PulsarFixture: settle dev is the broker under test, started as a user starts it.
class SettleDevIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String TOPIC = "persistent://public/default/settle-dev-it";

    @Test
    void devServesProduceAndConsumeQuietlyAndKeepsItsMessagesAcrossARestart() throws Exception {
        Path data = Path.of("target", "settle-dev-it").toAbsolutePath();
        deleteRecursively(data);
        int port = freePort();
        int httpPort = freePort();
        int bookiePort = freePort();
        List<String> dev = List.of(
                "./settle",
                "dev",
                "--port",
                Integer.toString(port),
                "--http-port",
                Integer.toString(httpPort),
                "--bookie-port",
                Integer.toString(bookiePort),
                "--data",
                data.toString());
        String url = "pulsar://localhost:" + port;

        String firstRun;
        Process broker = start(dev, data.resolveSibling("settle-dev-it-1.txt"));
        try {
            awaitReady(broker, data.resolveSibling("settle-dev-it-1.txt"));
            Run produced = run(
                    "./settle",
                    "produce",
                    TOPIC,
                    "--service-url",
                    url,
                    "--key",
                    "k-1",
                    "--property",
                    "origin=it",
                    "--count",
                    "2",
                    "hello\u001b[2J");
            assertThat(produced.exit).as(produced.output).isZero();
            assertThat(produced.output).contains("settle produce: 2 messages to " + TOPIC);

            Run consumed = run(
                    "./settle",
                    "consume",
                    TOPIC,
                    "--service-url",
                    url,
                    "--subscription",
                    "first",
                    "--count",
                    "2",
                    "--timeout",
                    "60");
            assertThat(consumed.exit).as(consumed.output).isZero();
            assertThat(consumed.output)
                    .contains("key: k-1", "properties: origin=it", "attempt 1")
                    .contains("payload (9 bytes): hello\\u001b[2J")
                    .doesNotContain("\u001b");
            // Left for after the restart: no subscription has acknowledged it (Pulsar deletes what every
            // subscription has acknowledged, unless the namespace retains it).
            Run waiting = run("./settle", "produce", TOPIC, "--service-url", url, "kept across a restart");
            assertThat(waiting.exit).as(waiting.output).isZero();
        } finally {
            firstRun = stop(broker, data.resolveSibling("settle-dev-it-1.txt"));
        }
        assertThat(firstRun)
                .contains(
                        "settle dev: Pulsar is ready in",
                        "service URL: " + url,
                        "admin URL:   http://localhost:" + httpPort,
                        "settle dev: stopped")
                .doesNotContain("Exception", "\tat ", "WARNING", "INFO:");
        assertThat(data.resolve("broker.log")).exists();

        // The same folder and ports: the subscription goes on where it stopped, with the message it had not read.
        Process again = start(dev, data.resolveSibling("settle-dev-it-2.txt"));
        try {
            awaitReady(again, data.resolveSibling("settle-dev-it-2.txt"));
            Run kept = run(
                    "./settle",
                    "consume",
                    TOPIC,
                    "--service-url",
                    url,
                    "--subscription",
                    "first",
                    "--count",
                    "1",
                    "--timeout",
                    "60");
            assertThat(kept.exit).as(kept.output).isZero();
            assertThat(kept.output).contains("payload (21 bytes): kept across a restart");
        } finally {
            stop(again, data.resolveSibling("settle-dev-it-2.txt"));
        }
    }

    @Test
    void devRefusesAPortInUseAndNamesTheFlag() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Run refused = run(
                    "./settle",
                    "dev",
                    "--port",
                    Integer.toString(taken.getLocalPort()),
                    "--http-port",
                    Integer.toString(freePort()),
                    "--data",
                    Path.of("target", "settle-dev-refused").toAbsolutePath().toString());
            assertThat(refused.exit).isEqualTo(1);
            assertThat(refused.output)
                    .contains("port " + taken.getLocalPort() + " (--port) is in use")
                    .contains("choose another with --port");
        }
    }

    record Run(int exit, String output) {}

    static Run run(String... command) throws Exception {
        Path output = Files.createTempFile(Path.of("target"), "settle-", ".txt");
        Process process = new ProcessBuilder(command)
                .directory(ROOT.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        assertThat(process.waitFor(3, TimeUnit.MINUTES))
                .as(String.join(" ", command))
                .isTrue();
        return new Run(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }

    private static Process start(List<String> command, Path output) throws IOException {
        return new ProcessBuilder(command)
                .directory(ROOT.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
    }

    private static void awaitReady(Process broker, Path output) {
        String printed = Waits.until(
                "settle dev ready (or stopped)",
                Duration.ofMinutes(3),
                () -> Files.readString(output),
                text -> text.contains("settle dev: Pulsar is ready") || !broker.isAlive());
        assertThat(printed).as("settle dev stopped before it was ready").contains("settle dev: Pulsar is ready");
    }

    /** SIGTERM, as Ctrl-C's SIGINT: the launcher execs the JVM, so the signal reaches it. */
    private static String stop(Process broker, Path output) throws Exception {
        broker.destroy();
        assertThat(broker.waitFor(60, TimeUnit.SECONDS))
                .as("stopped within 60 s")
                .isTrue();
        assertThat(broker.exitValue()).as(Files.readString(output)).isZero();
        return Files.readString(output);
    }

    private static int freePort() throws IOException {
        return SettleProcess.freePort();
    }

    private static void deleteRecursively(Path folder) throws IOException {
        if (Files.exists(folder)) {
            try (var paths = Files.walk(folder)) {
                for (Path path : paths.sorted((a, b) -> b.compareTo(a)).toList()) {
                    Files.delete(path);
                }
            }
        }
    }
}
