package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.driver.DriverMetrics;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.SystemTime;
import dev.settle.sdk.Handler;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code settle dlq list} and {@code show} on dead letters Settle wrote on the real broker; {@code settle dlq} and
 * {@code settle held} print what they read, without the Pulsar client's log.
 */
class DlqCommandIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final SettleCommand settle = new SettleCommand();

    private static final DriverMetrics NO_METRICS = new DriverMetrics() {
        @Override
        public void delivered(int attempt, long lagMillis) {}

        @Override
        public void settled(Settled how, long handlerNanos) {}

        @Override
        public void deadLettered() {}

        @Override
        public void heldChanged(int delta) {}

        @Override
        public void inFlightChanged(int delta) {}
    };

    @Test
    void listCountsByStageAndExceptionAndShowPrintsTheCauseWithoutConsumingAnything(@TempDir Path folder)
            throws Exception {
        String topic = pulsar.topic("dlq-command");
        Path manifest = pulsar.manifest()
                .subscription("orders", topic)
                // dlq reads pulsar: and the subscription, and looks for no JAR.
                .jar("not-built-yet.jar")
                .deadLetter(2, topic + "-dlq")
                .set("failureBackoff", "none")
                .writeTo(folder.resolve("settle.yaml"));
        SubscriptionSpec spec = ManifestLoader.loadWithoutJars(manifest, Map.of())
                .subscriptions()
                .get(0);
        Handler<String> boom = delivery -> {
            throw new IllegalStateException("boom \u001b[31m" + delivery.value());
        };
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        SubscriptionDriver driver = SubscriptionDriver.start(
                client, spec, SdkHandlerPort.of(boom, String.class, spec), new SystemTime(), NO_METRICS);
        try (Producer<String> producer =
                client.newProducer(Schema.STRING).topic(topic).create()) {
            for (int i = 0; i < 3; i++) {
                producer.send("order-" + i);
            }
        }
        // The dead-letter topic exists once its first letter is written: until then the stats call says not found.
        await().atMost(Duration.ofSeconds(60))
                .ignoreException(PulsarAdminException.NotFoundException.class)
                .until(() -> admin.topics().getStats(topic + "-dlq").getMsgInCounter() == 3);
        driver.stop(Duration.ofSeconds(5));

        assertThat(settle.run("dlq", "list", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out())
                .contains("3 dead letters")
                .contains("3  handler  java.lang.IllegalStateException")
                .contains("oldest: ");

        assertThat(settle.run("dlq", "show", manifest.toString(), "orders", "--limit", "2"))
                .isZero();
        String shown = settle.out();
        assertThat(shown)
                .contains("----- dead letter 1:", "----- dead letter 2:")
                .doesNotContain("----- dead letter 3:")
                .contains("settle.stage: handler", "settle.attempts: 2", "payload (7 bytes): order-0")
                // The escape character of the exception's message is shown, not sent to the terminal.
                .doesNotContain("\u001b");

        // Nothing was consumed: the dead letters wait on the initial subscription.
        assertThat(admin.topics()
                        .getStats(topic + "-dlq")
                        .getSubscriptions()
                        .get("orders-dlq")
                        .getMsgBacklog())
                .isEqualTo(3);
    }

    @Test
    void aSubscriptionTheManifestDoesNotHaveIsRefusedWithTheOnesItHas(@TempDir Path folder) throws Exception {
        Path manifest = pulsar.manifest()
                .serviceUrl("pulsar://localhost:1")
                .subscription("orders", "persistent://public/default/orders")
                .jar("not-built-yet.jar")
                .writeTo(folder.resolve("settle.yaml"));

        assertThat(settle.run("dlq", "list", manifest.toString(), "invoices")).isEqualTo(Main.USAGE);
        assertThat(settle.err()).contains("has no subscription 'invoices'; it has: orders");
        assertThat(settle.run("dlq", "list", manifest.toString(), "orders")).isEqualTo(Main.USAGE);
        assertThat(settle.err()).contains("has no deadLetterTopic");
    }

    @Test
    void dlqAndHeldPrintWhatTheyReadWithoutThePulsarClientsLogLines(@TempDir Path folder) throws Exception {
        String topic = pulsar.topic("dlq-quiet");
        String deadLetters = topic + "-dlq";
        Path manifest = pulsar.manifest()
                .subscription("orders", topic)
                .jar("not-built-yet.jar")
                .deadLetter(2, deadLetters)
                .set("onCap", "hold")
                .writeTo(folder.resolve("settle.yaml"));
        try (Producer<String> producer =
                pulsar.client().newProducer(Schema.STRING).topic(deadLetters).create()) {
            producer.newMessage()
                    .key("order-1")
                    .value("order-1")
                    .property("REAL_TOPIC", topic)
                    .send();
        }
        // A replay ran on this topic before (its durable subscription is there): list and show, which read without
        // one, are refused theirs by the broker and read through the replay's. The client warned of the refusal into
        // the output ('WARN [pulsar-client-io-1-1] o.a.pulsar.client.impl.ClientCnx - ... Received error from server:
        // Durable subscription with the same name already exists.'); its errors still show (it logs the refusal as one
        // too).
        pulsar.admin().topics().createSubscription(deadLetters, DlqReplay.SUBSCRIPTION, MessageId.earliest);

        List<List<String>> commands = List.of(
                List.of("dlq", "list"),
                List.of("dlq", "show"),
                List.of("dlq", "replay", "--dry-run"),
                List.of("held", "list"),
                List.of("held", "show"),
                List.of("held", "drain", "--dry-run"));
        for (List<String> command : commands) {
            // As a terminal runs it: its own process, output and log on the one console.
            String[] arguments = new String[command.size() + 2];
            command.toArray(arguments);
            arguments[command.size()] = manifest.toString();
            arguments[command.size() + 1] = "orders";
            try (SettleProcess process = SettleProcess.command(String.join("-", command), arguments)) {
                assertThat(process.exitsWithin(120))
                        .as("settle %s ended", command)
                        .isTrue();
                List<String> output = List.copyOf(process.output);
                assertThat(process.process.exitValue())
                        .as(String.join("\n", output))
                        .isZero();
                assertThat(output)
                        .as("settle %s prints what it read and nothing of the client's log", command)
                        .isNotEmpty()
                        .noneSatisfy(line ->
                                assertThat(line).containsPattern("(WARN|INFO|DEBUG|TRACE) +\\[[^]]*] o\\.a\\.p"));
                assertThat(output.get(0))
                        .as(String.join("\n", output))
                        .startsWith(command.get(0).equals("dlq") ? "dead-letter topic " : "held topic ");
            }
        }
    }
}
