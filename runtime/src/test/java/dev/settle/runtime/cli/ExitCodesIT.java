package dev.settle.runtime.cli;

import static dev.settle.testbroker.SettleProcess.freePort;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exit codes are one table ({@link ExitCodes}): docs/cli.md holds it as it is, {@code --help} shows it, and each
 * failure it documents is run here as a user would run it, its exit code compared with the table's.
 */
@ExtendWith(PulsarBroker.class)
class ExitCodesIT {
    private static final Path DOCUMENT = Path.of("..", "docs", "cli.md");

    @TempDir
    Path folder;

    private final SettleCommand settle = new SettleCommand();

    @Test
    void theDocumentHoldsTheTableTheHelpIsMadeFrom() throws Exception {
        String document = Files.readString(DOCUMENT);
        int start = document.indexOf("ExitCodes.markdown() -->\n") + "ExitCodes.markdown() -->\n".length();
        int end = document.indexOf("<!-- end of exit codes -->");
        assertThat(document.substring(start, end))
                .as("docs/cli.md's table; write ExitCodes.markdown() there")
                .isEqualTo(ExitCodes.markdown());
        for (var command : ExitCodes.BY_COMMAND.entrySet()) {
            settle.run(command.getKey(), "--help");
            for (ExitCodes.Row row : command.getValue()) {
                assertThat(settle.out().replaceAll("\\s+", " "))
                        .as("settle %s --help", command.getKey())
                        .contains(" " + row.code().code + " " + row.meaning());
            }
        }
    }

    @Test
    void everyDocumentedFailureEndsWithItsExitCode(PulsarEndpoints pulsar) throws Exception {
        Map<String, Callable<Integer>> failures = failures(pulsar);
        for (var command : ExitCodes.BY_COMMAND.entrySet()) {
            for (ExitCodes.Row row : command.getValue()) {
                if (row.code() == ExitCode.OK) {
                    continue;
                }
                String failure = command.getKey() + " " + row.code().code;
                assertThat(failures)
                        .as("a scenario for '%s': %s", failure, row.meaning())
                        .containsKey(failure);
                assertThat(failures.get(failure).call())
                        .as("settle %s (%s); stderr: %s", failure, row.meaning(), settle.err())
                        .isEqualTo(row.code().code);
            }
        }
    }

    /** One way to make each documented failure happen, keyed "command code". */
    private Map<String, Callable<Integer>> failures(PulsarEndpoints pulsar) throws Exception {
        String nobody = "pulsar://127.0.0.1:" + freePort();
        String noAdmin = "http://127.0.0.1:" + freePort();
        Path refused = Files.writeString(folder.resolve("refused.yaml"), "pulsr:\n  serviceUrl: " + nobody + "\n");
        Path token = Files.writeString(folder.resolve("token"), "a-token");
        String noToken = folder.resolve("no-token").toString();
        Path jar = echoJar("Echo", "return Outcome.ack();");
        Map<String, Callable<Integer>> failures = new LinkedHashMap<>();
        failures.put(
                "validate 1",
                () -> settle.run("validate", "--broker", unreachable(nobody).toString()));
        failures.put("validate 2", () -> settle.run("validate", refused.toString()));
        failures.put("validate 64", () -> settle.run("validate"));

        failures.put(
                "preflight 1", () -> settle.run("preflight", unreachable(nobody).toString()));
        failures.put("preflight 2", () -> settle.run("preflight", refused.toString()));
        failures.put("preflight 64", () -> settle.run("preflight"));

        failures.put("run 1", () -> runWithItsPortTaken(nobody));
        failures.put("run 2", () -> settle.run("run", refused.toString()));
        failures.put("run 64", () -> settle.run("run", "--log-format", "xml", refused.toString()));
        failures.put("run 70", () -> runOutOfMemory(pulsar));

        failures.put(
                "deploy 1",
                () -> settle.run(
                        "deploy",
                        jar.toString(),
                        "--subscription",
                        "s",
                        "--admin",
                        noAdmin,
                        "--token-file",
                        token.toString()));
        failures.put(
                "deploy 2",
                () -> settle.run(
                        "deploy", jar.toString(), "--subscription", "s", "--admin", noAdmin, "--token-file", noToken));
        failures.put(
                "deploy 64", () -> settle.run("deploy", jar.toString(), "--subscription", "s", "--admin", noAdmin));
        failures.put(
                "rollback 1",
                () -> settle.run(
                        "rollback", "--subscription", "s", "--admin", noAdmin, "--token-file", token.toString()));
        failures.put(
                "rollback 2",
                () -> settle.run("rollback", "--subscription", "s", "--admin", noAdmin, "--token-file", noToken));
        failures.put("rollback 64", () -> settle.run("rollback", "--subscription", "s", "--admin", noAdmin));
        failures.put("status 1", () -> settle.run("status", "--admin", noAdmin, "--token-file", token.toString()));
        failures.put("status 2", () -> settle.run("status", "--admin", noAdmin, "--token-file", noToken));
        // Without --token-file: 2 before, where the help said 64.
        failures.put("status 64", () -> settle.run("status", "--admin", noAdmin));

        // This JVM has no -Dsettle.dev.broker: as a settle without a clone.
        failures.put("dev 1", () -> settle.run("dev"));
        failures.put("dev 64", () -> settle.run("dev", "--port", "six"));

        String topic = "persistent://public/default/exit-codes";
        failures.put("produce 1", () -> settle.run("produce", topic, "--service-url", nobody, "x"));
        failures.put("produce 2", () -> settle.run("produce", topic, "--file", noToken));
        failures.put("produce 64", () -> settle.run("produce", topic, "--count", "0", "x"));
        failures.put("consume 1", () -> settle.run("consume", topic, "--service-url", nobody));
        failures.put("consume 2", () -> settle.run("consume", topic, "--manifest", refused.toString()));
        failures.put("consume 64", () -> settle.run("consume", topic, "--count", "-1"));
        return failures;
    }

    /**
     * A second run of a project on the port the first one holds: exit 1, and the message names the environment
     * variable the generated manifest reads the port from.
     */
    private int runWithItsPortTaken(String serviceUrl) throws Exception {
        try (ServerSocket first = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Path manifest =
                    Files.writeString(folder.resolve("settle.yaml"), """
                    pulsar:
                      serviceUrl: %s
                    http:
                      port: ${SETTLE_HTTP_PORT:-%d}
                      bindAddress: 127.0.0.1
                    subscriptions:
                      - name: echo
                        topics: [persistent://public/default/exit-codes]
                        jar: Echo.jar
                    """.formatted(serviceUrl, first.getLocalPort()));
            try (SettleProcess second = SettleProcess.command("second run", "run", manifest.toString())) {
                assertThat(second.exitsWithin(60)).as("the second run exits").isTrue();
                assertThat(second.output)
                        .anyMatch(line -> line.contains("is another settle running on it? Stop it, or give this one"
                                + " another port: SETTLE_HTTP_PORT=" + (first.getLocalPort() + 1)
                                + " settle run settle.yaml (http.port in"
                                + " settle.yaml reads SETTLE_HTTP_PORT)"));
                return second.process.exitValue();
            }
        }
    }

    /** A valid manifest (its handler JAR there) whose broker cannot be reached at {@code serviceUrl}. */
    private Path unreachable(String serviceUrl) throws Exception {
        echoJar("Echo", "return Outcome.ack();");
        return Files.writeString(folder.resolve("unreachable.yaml"), """
                pulsar:
                  serviceUrl: %s
                subscriptions:
                  - name: echo
                    topics: [persistent://public/default/exit-codes]
                    jar: Echo.jar
                """.formatted(serviceUrl));
    }

    /** A handler that runs out of memory at its first message. */
    private int runOutOfMemory(PulsarEndpoints pulsar) throws Exception {
        echoJar("Hungry", "throw new OutOfMemoryError(\"Java heap space (thrown by the test handler)\");");
        String topic = "persistent://public/default/exit-oom-" + System.nanoTime();
        int http = freePort();
        Path manifest = Files.writeString(
                folder.resolve("hungry.yaml"),
                PulsarFixture.manifestText(pulsar.serviceUrl(), http, """
                subscriptions:
                  - name: hungry
                    topics: [%s]
                    jar: Hungry.jar
                """.formatted(topic)));
        try (SettleProcess run = SettleProcess.run(manifest, "out of memory");
                PulsarClient client =
                        PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build();
                Producer<String> producer =
                        client.newProducer(Schema.STRING).topic(topic).create()) {
            // Subscribed before the message is sent: a new subscription starts at the latest message.
            await().atMost(Duration.ofSeconds(60)).until(() -> SettleProcess.status(http, "/readyz") == 200);
            producer.send("m");
            assertThat(run.exitsWithin(90)).as("the run stops by itself").isTrue();
            return run.process.exitValue();
        }
    }

    private Path echoJar(String name, String handle) {
        Path jar = folder.resolve(name + ".jar");
        TestJar.at(jar)
                .source("test." + name, """
                        package test;
                        import dev.settle.sdk.*;
                        public class %s implements Handler<String> {
                            @Override public Outcome handle(Delivery<String> delivery) { %s }
                        }
                        """.formatted(name, handle))
                .services("test." + name)
                .build();
        return jar;
    }
}
