package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * {@code settle run} of an exactly-once subscription on a cluster with transactions off says so in one plain line
 * and waits unready, instead of failing with the client's stack trace.
 */
// A broker of its own (PulsarFixture.ownBroker): transactions off, which the shared broker has on.
// At most two brokers in the failsafe JVM (-Xmx1g): one of its own at a time beside the shared one.
@ResourceLock("a second embedded broker")
class TransactionsOffIT {
    @TempDir
    static Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.ownBroker(Map.of("transactionCoordinatorEnabled", "false"));

    @Test
    void anExactlyOnceSubscriptionSaysToEnableTheTransactionCoordinatorAndStaysUnready() throws Exception {
        TestJar.at(folder.resolve("upper.jar"))
                .source("com.example.upper.Upper", """
                        package com.example.upper;
                        import java.util.function.Function;
                        public class Upper implements Function<String, String> {
                            @Override public String apply(String input) {
                                return input.toUpperCase();
                            }
                        }
                        """)
                .build();
        int port = SettleProcess.freePort();
        String input = pulsar.topic("no-transactions");
        Path manifest = pulsar.manifest()
                .httpPort(port)
                .subscription("upper", input)
                .set("function", "com.example.upper.Upper")
                .jar("upper.jar")
                .set("output", input + "-out")
                .set("guarantee", "exactly-once")
                .writeTo(folder.resolve("settle.yaml"));

        try (SettleProcess settle = pulsar.settle(manifest)) {
            await().atMost(Duration.ofSeconds(90))
                    .until(() -> settle.lines("") > 0
                            && settle.output.stream()
                                    .anyMatch(line ->
                                            line.contains("enable transactionCoordinatorEnabled on the brokers")));
            // Past the first failure and its first retry: still unready, still one line, and no stack anywhere.
            Waits.during(
                    "unready past the first retry",
                    Duration.ofSeconds(6),
                    () -> SettleProcess.status(port, "/readyz") == 503,
                    () -> "/readyz " + SettleProcess.status(port, "/readyz"));
            assertThat(settle.output.stream()
                            .filter(line -> line.contains("enable transactionCoordinatorEnabled on the brokers")))
                    .hasSize(1);
            assertThat(settle.output).noneMatch(line -> line.startsWith("\tat ") || line.startsWith("Caused by"));
            assertThat(settle.process.isAlive()).isTrue();
        }
    }
}
