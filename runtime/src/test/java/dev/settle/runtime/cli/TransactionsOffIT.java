package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.EmbeddedPulsar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code settle run} of an exactly-once subscription on a cluster with transactions off says so in one plain line
 * and waits unready, instead of failing with the client's stack trace.
 */
class TransactionsOffIT {
    @TempDir
    static Path folder;

    private static EmbeddedPulsar broker;

    @BeforeAll
    static void startABrokerWithoutTransactions() throws Exception {
        broker = EmbeddedPulsar.start(Map.of("transactionCoordinatorEnabled", "false"));
    }

    @AfterAll
    static void stopIt() throws Exception {
        if (broker != null) {
            broker.close();
        }
    }

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
        String input = "persistent://public/default/no-transactions-" + System.nanoTime();
        Path manifest = folder.resolve("settle.yaml");
        Files.writeString(
                manifest,
                PulsarFixture.manifestText(broker.endpoints().serviceUrl(), port, """
                subscriptions:
                  - name: upper
                    topics: [%s]
                    function: com.example.upper.Upper
                    jar: upper.jar
                    output: %s-out
                    guarantee: exactly-once
                """.formatted(input, input)));

        try (SettleProcess settle = SettleProcess.run(manifest, "settle without transactions")) {
            await().atMost(Duration.ofSeconds(90))
                    .until(() -> settle.lines("") > 0
                            && settle.output.stream()
                                    .anyMatch(line ->
                                            line.contains("enable transactionCoordinatorEnabled on the brokers")));
            // Past the first failure and its first retry: still unready, still one line, and no stack anywhere.
            Thread.sleep(6_000);
            assertThat(SettleProcess.status(port, "/readyz")).isEqualTo(503);
            assertThat(settle.output.stream()
                            .filter(line -> line.contains("enable transactionCoordinatorEnabled on the brokers")))
                    .hasSize(1);
            assertThat(settle.output).noneMatch(line -> line.startsWith("\tat ") || line.startsWith("Caused by"));
            assertThat(settle.process.isAlive()).isTrue();
        }
    }
}
