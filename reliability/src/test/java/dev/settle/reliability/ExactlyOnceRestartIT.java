package dev.settle.reliability;

import static dev.settle.testbroker.SettleProcess.freePort;
import static dev.settle.testbroker.SettleProcess.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.testbroker.SettleProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.PersistentTopicInternalStats;
import org.apache.pulsar.common.policies.data.TransactionBufferStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code guarantee: exactly-once} across a broker restart (issue 28): the broker, with its transaction coordinator,
 * restarted while the runtime works through sequence-numbered inputs with the recording handler publishing one output
 * per call (before it retries, fails or acknowledges a twentieth of them each). Every input's output is read exactly
 * once by a fresh consumer, the backlog is 0, and the runtime is ready again by itself. At at-least-once the same
 * run reads the outputs of retried and failed attempts too, so the assertion can fail.
 */
class ExactlyOnceRestartIT {
    static final int MESSAGES = 4_000;

    @TempDir
    Path folder;

    @Test
    void aBrokerRestartMidRunNeitherLosesNorDoublesAnOutputAtExactlyOnce() throws Exception {
        Map<String, Integer> outputs = restartMidRun("exactly-once");

        assertThat(outputs).hasSize(MESSAGES);
        assertThat(outputs.values().stream().filter(copies -> copies != 1))
                .as("outputs read more than once")
                .isEmpty();
    }

    @Test
    void atLeastOnceReadsTheOutputsOfRetriedAttemptsAcrossTheSameRestart() throws Exception {
        Map<String, Integer> outputs = restartMidRun("at-least-once");

        assertThat(outputs).hasSize(MESSAGES);
        assertThat(outputs.values().stream().filter(copies -> copies > 1)).isNotEmpty();
    }

    private Map<String, Integer> restartMidRun(String guarantee) throws Exception {
        String topic = Workload.topic("eo-restart");
        String output = topic + "-out";
        Path record = folder.resolve("eo-restart.calls");
        try (DurableBroker broker = new DurableBroker(folder.resolve("broker"), "127.0.0.1")) {
            broker.start();
            int http = freePort();
            // handlerTimeout 5 s: a transaction the restart leaves open is aborted 35 s after it began.
            Path manifest = Workload.manifest(
                    folder.resolve("eo-restart.yaml"),
                    broker.serviceUrl(),
                    http,
                    "",
                    List.of(new Workload.Subscription(
                            "eo-restart",
                            topic,
                            "Key_Shared",
                            8,
                            record,
                            "mixed",
                            Map.of("guarantee", guarantee, "handlerTimeout", "5s"),
                            Map.of("publishTo", output))));
            try (PulsarClient client =
                    PulsarClient.builder().serviceUrl(broker.serviceUrl()).build()) {
                Workload.publish(client, topic, 0, MESSAGES);
            }
            try (SettleProcess settle = SettleProcess.run(manifest, guarantee + " restart")) {
                await().atMost(Duration.ofSeconds(90)).until(() -> status(http, "/readyz") == 200);
                AckCounter acks = new AckCounter(record);
                await().atMost(Duration.ofSeconds(90)).until(() -> acks.acks() >= MESSAGES / 10);

                broker.stop();
                long acksAtStop = acks.acks();
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> status(http, "/readyz") == 503);
                assertThat(acksAtStop).as("the restart came mid-run").isLessThan(MESSAGES);
                broker.start();
                long up = System.nanoTime();
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> status(http, "/readyz") == 200);
                Duration ready = Duration.ofNanos(System.nanoTime() - up);
                try (PulsarAdmin admin =
                        PulsarAdmin.builder().serviceHttpUrl(broker.adminUrl()).build()) {
                    await().atMost(Duration.ofMinutes(4))
                            .pollInterval(Duration.ofSeconds(1))
                            .until(() ->
                                    Workload.stats(admin, topic, "eo-restart").getMsgBacklog() == 0);
                }
                Duration drained = Duration.ofNanos(System.nanoTime() - up);
                Map<String, Integer> outputs = copies(broker.serviceUrl(), output);
                if (outputs.size() < MESSAGES) {
                    // Stored but held back from readers (a transaction still open), or not stored at all: say which.
                    try (PulsarAdmin admin = PulsarAdmin.builder()
                            .serviceHttpUrl(broker.adminUrl())
                            .build()) {
                        TransactionBufferStats buffer = admin.transactions().getTransactionBufferStats(output, false);
                        PersistentTopicInternalStats stored = admin.topics().getInternalStats(output);
                        System.out.printf(
                                "output topic: %d entries stored, the last at %s; its transaction buffer %s, read up"
                                        + " to %s, %d transactions ongoing, %d aborted%n",
                                stored.numberOfEntries,
                                stored.lastConfirmedEntry,
                                buffer.state,
                                buffer.maxReadPosition,
                                buffer.ongoingTxnSize,
                                buffer.totalAbortedTransactions);
                        System.out.println("transactions open past 30 s: "
                                + admin.transactions().getSlowTransactions(30, TimeUnit.SECONDS));
                    }
                }
                outputs.forEach((value, copies) -> {
                    if (copies > 1) {
                        String sequence = value.substring("out ".length());
                        try {
                            System.out.println(value + " read " + copies + " times; its calls: "
                                    + java.nio.file.Files.readAllLines(record).stream()
                                            .filter(line -> line.startsWith(sequence + " "))
                                            .toList());
                        } catch (java.io.IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    }
                });
                System.out.printf(
                        "%s: broker restart after %d acknowledgements: runtime ready %d ms after the broker served,"
                                + " backlog 0 after %d ms; %d distinct outputs of %d, %d read more than once%n",
                        guarantee,
                        acksAtStop,
                        ready.toMillis(),
                        drained.toMillis(),
                        outputs.size(),
                        MESSAGES,
                        outputs.values().stream().filter(copies -> copies > 1).count());
                settle.sigterm();
                assertThat(settle.exitsWithin(30)).isTrue();
                return outputs;
            }
        }
    }

    /**
     * Every value of {@code topic} with how often it was read, by a fresh consumer from the start: until every input
     * has one (a transaction the restart left open holds readers back until the coordinator aborts it), then until
     * nothing more comes for 5 s.
     */
    private static Map<String, Integer> copies(String serviceUrl, String topic) throws Exception {
        Map<String, Integer> copies = new HashMap<>();
        try (PulsarClient client = PulsarClient.builder().serviceUrl(serviceUrl).build();
                Consumer<String> reader = client.newConsumer(Schema.STRING)
                        .topic(topic)
                        .subscriptionName("reader-" + System.nanoTime())
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .receiverQueueSize(1000)
                        .subscribe()) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (copies.size() < MESSAGES && System.nanoTime() < deadline) {
                Message<String> message = reader.receive(1, TimeUnit.SECONDS);
                if (message != null) {
                    copies.merge(message.getValue(), 1, Integer::sum);
                }
            }
            for (Message<String> message = reader.receive(5, TimeUnit.SECONDS);
                    message != null;
                    message = reader.receive(5, TimeUnit.SECONDS)) {
                copies.merge(message.getValue(), 1, Integer::sum);
            }
        }
        return copies;
    }
}
