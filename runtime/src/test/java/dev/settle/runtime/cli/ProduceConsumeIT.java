package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.PulsarFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code settle produce} and {@code settle consume} against the real broker, connected through a manifest. */
class ProduceConsumeIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final SettleCommand settle = new SettleCommand();

    @Test
    void whatProduceSendsWithKeyPropertiesAndCountIsWhatAConsumerGetsAndConsumeShows(@TempDir Path folder)
            throws Exception {
        String topic = "persistent://public/default/produce-consume-it";
        Path manifest = Files.writeString(
                folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: %s
                subscriptions:
                  - name: handler
                    topics: [persistent://public/default/elsewhere]
                    jar: not-built-yet.jar   # produce and consume read only pulsar:, and look for no JAR
                """.formatted(pulsar.endpoints().serviceUrl()));
        Path binary = Files.write(folder.resolve("payload.bin"), new byte[] {0, (byte) 0xff, 0x1b});

        PulsarClient client = pulsar.client();
        try (Consumer<byte[]> reader = client.newConsumer(Schema.BYTES)
                .topic(topic)
                .subscriptionName("reader")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            assertThat(settle.run(
                            "produce",
                            topic,
                            "--manifest",
                            manifest.toString(),
                            "--key",
                            "k-1",
                            "--property",
                            "origin=it",
                            "--property",
                            "trace=t=1",
                            "--count",
                            "2",
                            "héllo"))
                    .as(settle.err())
                    .isZero();
            assertThat(settle.out()).contains("settle produce: 2 messages to " + topic);
            assertThat(settle.run("produce", topic, "--manifest", manifest.toString(), "--file", binary.toString()))
                    .isZero();

            for (int i = 0; i < 2; i++) {
                Message<byte[]> message = reader.receive(30, TimeUnit.SECONDS);
                assertThat(message).isNotNull();
                assertThat(new String(message.getData(), StandardCharsets.UTF_8))
                        .isEqualTo("héllo");
                assertThat(message.getKey()).isEqualTo("k-1");
                assertThat(message.getProperties()).isEqualTo(Map.of("origin", "it", "trace", "t=1"));
            }
            assertThat(reader.receive(30, TimeUnit.SECONDS).getData()).containsExactly(0, 0xff, 0x1b);
        }

        assertThat(settle.run(
                        "consume",
                        topic,
                        "--manifest",
                        manifest.toString(),
                        "--subscription",
                        "shown",
                        "--count",
                        "3",
                        "--timeout",
                        "60"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out())
                .contains("----- message 1: ", "attempt 1", "key: k-1", "properties: origin=it, trace=t=1")
                .contains("payload (6 bytes): héllo")
                .contains("----- message 3: ", "key: (none)", "payload (3 bytes): hex: 00 ff 1b");

        // Nothing more there: --timeout gives up with exit 1 and says how many came.
        assertThat(settle.run(
                        "consume",
                        topic,
                        "--manifest",
                        manifest.toString(),
                        "--subscription",
                        "shown",
                        "--count",
                        "1",
                        "--timeout",
                        "2"))
                .isEqualTo(1);
        assertThat(settle.err()).contains("0 of 1 messages within 2 s on " + topic);
    }

    public record Greeting(String name) {}

    @Test
    void schemaAutoChecksThePayloadAgainstTheTopicsSchema() throws Exception {
        String topic = "persistent://public/default/produce-auto-it";
        PulsarClient client = pulsar.client();
        // A JSON producer registers the topic's schema, as a JSON handler's producers do.
        try (var json =
                client.newProducer(Schema.JSON(Greeting.class)).topic(topic).create()) {
            json.send(new Greeting("first"));

            assertThat(settle.run(
                            "produce",
                            topic,
                            "--service-url",
                            pulsar.endpoints().serviceUrl(),
                            "--schema",
                            "auto",
                            "{\"name\": \"ada\"}"))
                    .as(settle.err())
                    .isZero();
            assertThat(settle.run(
                            "produce",
                            topic,
                            "--service-url",
                            pulsar.endpoints().serviceUrl(),
                            "--schema",
                            "auto",
                            "ada"))
                    .isEqualTo(1);
            assertThat(settle.err())
                    .contains("settle produce: " + topic + ": the payload does not fit the topic's schema");
        }
    }
}
