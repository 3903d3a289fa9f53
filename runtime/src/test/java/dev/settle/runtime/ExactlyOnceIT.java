package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code guarantee: exactly-once} on a real broker: a delivery's outputs are read only when its transaction commits,
 * so the outputs of a failed attempt are never seen; the same function at at-least-once shows them (so the first
 * test can fail).
 */
@ExtendWith(PulsarBroker.class)
class ExactlyOnceIT {
    private static final int MESSAGES = 60;

    @TempDir
    Path folder;

    private PulsarEndpoints pulsar;
    private PulsarClient client;
    private PulsarAdmin admin;
    private final List<AutoCloseable> running = new ArrayList<>();

    @BeforeEach
    void connect(PulsarEndpoints endpoints) throws Exception {
        pulsar = endpoints;
        client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build();
        admin = PulsarAdmin.builder().serviceHttpUrl(pulsar.adminUrl()).build();
    }

    @AfterEach
    void close() throws Exception {
        for (int i = running.size() - 1; i >= 0; i--) {
            running.get(i).close();
        }
        admin.close();
        client.close();
    }

    @Test
    void theOutputsOfAFailedAttemptAreNeverReadAndEveryInputHasEachOutputOnce() throws Exception {
        Run run = runFlakyFunction("exactly-once");

        // Every input: its side message and its return value once each, although a third of them published both
        // and then failed on their first attempt.
        assertThat(run.side)
                .hasSize(MESSAGES)
                .allSatisfy((value, copies) -> assertThat(copies).as(value).isEqualTo(1));
        assertThat(run.output)
                .hasSize(MESSAGES)
                .allSatisfy((value, copies) -> assertThat(copies).as(value).isEqualTo(1));
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"flaky\",outcome=\"committed\"}"))
                .isEqualTo(MESSAGES);
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"flaky\",outcome=\"aborted\"}"))
                .isEqualTo(MESSAGES / 3);
        assertThat(metric(run.settle, "settle_transaction_commit_duration_seconds_count{subscription=\"flaky\"}"))
                .isEqualTo(MESSAGES);
    }

    /** The same function at at-least-once: the failed attempts' side messages stay, so their inputs have two. */
    @Test
    void atLeastOnceKeepsTheOutputsOfAFailedAttempt() throws Exception {
        Run run = runFlakyFunction("at-least-once");

        assertThat(run.side).hasSize(MESSAGES);
        assertThat(run.side.values().stream().filter(copies -> copies == 2)).hasSize(MESSAGES / 3);
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"flaky\",outcome=\"committed\"}"))
                .isZero();
    }

    private record Run(Settle settle, Map<String, Integer> output, Map<String, Integer> side) {}

    /**
     * Runs a function that publishes a side message with {@code context.publish}, then fails the first attempt of
     * every third input (after the publish), and returns its output otherwise; waits until every input is
     * acknowledged and reads both topics back with a fresh consumer.
     */
    private Run runFlakyFunction(String guarantee) throws Exception {
        TestJar.at(folder.resolve("flaky.jar"))
                .source("com.example.flaky.Flaky", """
                        package com.example.flaky;
                        import java.util.Set;
                        import java.util.concurrent.ConcurrentHashMap;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Flaky implements Function<String, String> {
                            private static final Set<String> SEEN = ConcurrentHashMap.newKeySet();
                            @Override public String process(String input, Context context) throws Exception {
                                String side = context.getUserConfigValue("side").get().toString();
                                context.newOutputMessage(side, org.apache.pulsar.client.api.Schema.STRING)
                                        .value("side " + input).sendAsync();
                                int n = Integer.parseInt(input.substring(2));
                                if (n % 3 == 0 && SEEN.add(input)) {
                                    throw new IllegalStateException("first attempt of " + input + " fails");
                                }
                                return "out " + input;
                            }
                        }
                        """)
                .build();
        String input = "persistent://public/default/flaky-" + System.nanoTime();
        String output = input + "-out";
        String side = input + "-side";
        admin.topics().createNonPartitionedTopic(input);
        admin.topics().createSubscription(input, "flaky", MessageId.earliest);
        Path manifest = folder.resolve("flaky.yaml");
        Files.writeString(manifest, """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                subscriptions:
                  - name: flaky
                    topics: [%s]
                    function: com.example.flaky.Flaky
                    jar: flaky.jar
                    output: %s
                    config: {side: %s}
                    concurrency: 4
                    failureBackoff: {initial: 10ms, max: 10ms}
                    guarantee: %s
                """.formatted(pulsar.serviceUrl(), input, output, side, guarantee));
        Deployment deployment = Preflight.check(manifest, Map.of());
        running.add(deployment);
        Settle settle = Settle.start(deployment, Duration.ofSeconds(5));
        running.add(settle);
        try (Producer<String> producer = client.newProducer(Schema.STRING)
                .topic(input)
                .enableBatching(false)
                .create()) {
            List<CompletableFuture<?>> sends = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                sends.add(producer.sendAsync(String.format("m-%03d", i)));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        }
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> metric(settle, "settle_outcomes_total{subscription=\"flaky\",outcome=\"ack\"}") >= MESSAGES
                        && admin.topics()
                                        .getStats(input)
                                        .getSubscriptions()
                                        .get("flaky")
                                        .getMsgBacklog()
                                == 0);
        return new Run(settle, copies(output), copies(side));
    }

    /** Every value of {@code topic} with how often it was read, by a fresh consumer from the start. */
    private Map<String, Integer> copies(String topic) throws Exception {
        Map<String, Integer> copies = new TreeMap<>();
        try (Consumer<String> reader = client.newConsumer(Schema.STRING)
                .topic(topic)
                .subscriptionName("reader-" + System.nanoTime())
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            for (Message<String> message = reader.receive(3, TimeUnit.SECONDS);
                    message != null;
                    message = reader.receive(3, TimeUnit.SECONDS)) {
                copies.merge(message.getValue(), 1, Integer::sum);
            }
        }
        return copies;
    }

    private static double metric(Settle settle, String sample) {
        Double value = Exposition.of(settle.metrics().registry()).value(sample);
        return value == null ? 0 : value;
    }
}
