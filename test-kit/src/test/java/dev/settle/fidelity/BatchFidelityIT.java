package dev.settle.fidelity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.Settled;
import dev.settle.test.DeadLetterMessage;
import dev.settle.test.Delivered;
import dev.settle.test.SettleTestDriver;
import dev.settle.testbroker.PulsarFixture;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.IntStream;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A batch handler (issue 47) on the test kit against the real broker: the poison-message scenario of the runtime's
 * {@code BatchHandlerIT} (a batch of 100 with 3 poison messages, a bulk write that throws for the whole batch,
 * {@code maxAttempts: 3}), from one manifest and one handler JAR, once on {@link SettleTestDriver} and once on
 * {@link Settle} against the embedded broker. Both must make the same calls (each call's deliveries and their
 * attempts, in order), settle them alike (the exported outcome, dead-letter and batch metrics) and write the same dead
 * letters with the same causes. When they differ, the kit is wrong.
 */
class BatchFidelityIT {
    private static final List<String> POISON = List.of("m7", "m50", "m93");
    private static final int MESSAGES = 100;
    /** The exported series both runs must agree on. */
    private static final List<String> COMPARED = List.of(
            "settle_outcomes_total", "settle_dead_lettered_total", "settle_batch_size", "settle_batch_splits_total");

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @TempDir
    Path folder;

    @Test
    void thePoisonScenarioMakesTheSameCallsOutcomesAndLettersOnTheKitAsOnTheBroker() throws Exception {
        Path jar = handlerJar(folder.resolve("bulk.jar"));
        Path manifest =
                Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: ${PULSAR_URL}
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                subscriptions:
                  - name: bulk
                    topics: ["${TOPIC}"]
                    type: Shared
                    jar: ${JAR}
                    maxAttempts: 3
                    deadLetterTopic: "${TOPIC}-dlq"
                    config:
                      poison: %s
                      calls: ${CALLS}
                    batch: {maxMessages: %d, maxWait: 1s}
                """.formatted(String.join(",", POISON), MESSAGES));
        List<String> values =
                IntStream.range(0, MESSAGES).mapToObj(i -> "m" + i).toList();

        // The kit: each send joins the open batch; the 100th fills it. The clock then moves past every backoff and
        // maxWait.
        Path kitCalls = folder.resolve("kit-calls.txt");
        String kitTopic = PulsarFixture.unique("persistent://public/default/bulk-kit");
        List<Delivered> kitDeliveries;
        List<String> kitLetters;
        List<String> kitMetrics;
        try (SettleTestDriver kit = SettleTestDriver.fromManifest(manifest, environment(kitTopic, jar, kitCalls))) {
            values.forEach(kit::send);
            kit.advance(Duration.ofSeconds(10));
            kitDeliveries = kit.deliveries();
            kitLetters = kit.deadLetters().stream().map(BatchFidelityIT::letter).toList();
            kitMetrics = compared(kit.metricsText());
        }

        // The broker: the same 100 published before Settle starts, so its first batch holds them all (maxWait 1 s).
        Path brokerCalls = folder.resolve("broker-calls.txt");
        String topic = PulsarFixture.unique("persistent://public/default/bulk-broker");
        pulsar.backlog(topic, "bulk", MESSAGES, values::get);
        List<String> brokerLetters;
        List<String> brokerMetrics;
        Deployment deployment = pulsar.closeAfterTest(Preflight.check(manifest, environment(topic, jar, brokerCalls)));
        Settle settle = pulsar.closeAfterTest(Settle.start(deployment, Duration.ofSeconds(5)));
        brokerLetters = letters(topic + "-dlq", POISON.size());
        await().atMost(Duration.ofSeconds(60)).until(() -> pulsar.backlog(topic, "bulk") == 0);
        brokerMetrics = compared(text(settle.metrics().registry()));

        List<String> calls = Files.readAllLines(brokerCalls);
        assertThat(calls.get(0).split(",")).as("the broker's first call").hasSize(MESSAGES);
        assertThat(Files.readAllLines(kitCalls))
                .as("each call's deliveries (value@attempt), in order")
                .isEqualTo(calls);
        assertThat(kitLetters).as("dead letters: payload and cause").isEqualTo(brokerLetters);
        assertThat(kitMetrics)
                .as("exported outcome, dead-letter and batch series")
                .isEqualTo(brokerMetrics);

        // And what both agree on is the contract: 97 acknowledged once, the 3 failing alone up to their cap.
        assertThat(kitDeliveries).filteredOn(d -> d.outcome() == Settled.ACK).hasSize(MESSAGES - POISON.size());
        assertThat(brokerLetters)
                .containsExactlyInAnyOrder(
                        "m7: bulk write refused m7", "m50: bulk write refused m50", "m93: bulk write refused m93");
    }

    private Map<String, String> environment(String topic, Path jar, Path calls) {
        return Map.of(
                "PULSAR_URL", pulsar.endpoints().serviceUrl(),
                "TOPIC", topic,
                "JAR", jar.toString(),
                "CALLS", calls.toString());
    }

    /** Reads {@code count} dead letters from the start of {@code topic}, each as its payload and cause. */
    private List<String> letters(String topic, int count) throws Exception {
        List<String> letters = new ArrayList<>();
        try (Consumer<byte[]> reader = pulsar.client()
                .newConsumer(Schema.BYTES)
                .topic(topic)
                .subscriptionName(PulsarFixture.unique("reader"))
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            while (letters.size() < count) {
                Message<byte[]> letter = reader.receive(60, TimeUnit.SECONDS);
                assertThat(letter)
                        .as("dead letter %d of %d within 60 s", letters.size() + 1, count)
                        .isNotNull();
                letters.add(new String(letter.getData(), StandardCharsets.UTF_8) + ": "
                        + letter.getProperty(DeadLetterProperties.EXCEPTION_MESSAGE));
            }
        }
        return letters;
    }

    private static String letter(DeadLetterMessage letter) {
        return new String(letter.data(), StandardCharsets.UTF_8) + ": "
                + letter.properties().get(DeadLetterProperties.EXCEPTION_MESSAGE);
    }

    /** The lines of {@link #COMPARED} for subscription {@code bulk}, in the Prometheus text format. */
    private static List<String> compared(String text) {
        return text.lines()
                .filter(line -> COMPARED.stream().anyMatch(line::startsWith)
                        && line.contains("subscription=\"bulk\"")
                        // When the series was made: the two runs' differ.
                        && !line.contains("_created"))
                .sorted()
                .toList();
    }

    private static String text(PrometheusRegistry registry) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
        return out.toString(StandardCharsets.UTF_8);
    }

    /** {@link BulkWriter}, compiled with this test, in a JAR of its own with its services file. */
    private static Path handlerJar(Path jar) throws Exception {
        Path classes = Path.of(BulkWriter.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        String entry = BulkWriter.class.getName().replace('.', '/') + ".class";
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream zip = new JarOutputStream(out)) {
            zip.putNextEntry(new JarEntry(entry));
            zip.write(Files.readAllBytes(classes.resolve(entry)));
            zip.closeEntry();
            zip.putNextEntry(new JarEntry("META-INF/services/dev.settle.sdk.BatchHandler"));
            zip.write((BulkWriter.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
            zip.closeEntry();
        }
        return jar;
    }
}
