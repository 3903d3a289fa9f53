package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The handler's type argument decides the schema: String, byte[] and a record of the handler's own JAR each get
 * correctly typed values from the real broker; a payload that cannot be decoded takes the failure path.
 */
@ExtendWith(PulsarBroker.class)
class MessageTypesIT {
    @TempDir
    Path folder;

    /** A handler of {@code type} that appends "class-name|value" lines to the file in config "out". */
    private void handlerJar(String name, String type, String show, String extraSource) {
        TestJar jar = TestJar.at(folder.resolve(name + ".jar"))
                .source("test." + name, """
                        package test;
                        import dev.settle.sdk.*;
                        import java.nio.file.*;
                        public class %s implements Handler<%s> {
                            private Path out;
                            @Override public void open(HandlerContext context) {
                                out = Path.of(context.config().get("out"));
                            }
                            @Override public Outcome handle(Delivery<%s> delivery) throws Exception {
                                String line = delivery.value().getClass().getName() + "|" + %s + "\\n";
                                Files.writeString(out, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                                return Outcome.ack();
                            }
                        }
                        """.formatted(name, type, type, show))
                .services("test." + name);
        if (extraSource != null) {
            jar.source("test.Order", extraSource);
        }
        jar.build();
    }

    private static String subscription(String name, String topic, Path out, String extra) {
        return """
                  - name: %s
                    topics: [%s]
                    jar: %s.jar
                    config:
                      out: %s
                %s
                """.formatted(name, topic, name, out, extra.indent(4).stripTrailing());
    }

    private static double outcomes(Settle settle, String subscription, String outcome) {
        return settle.metrics().registry().scrape().stream()
                .filter(snapshot -> snapshot.getMetadata().getName().equals("settle_outcomes"))
                .flatMap(snapshot -> ((CounterSnapshot) snapshot).getDataPoints().stream())
                .filter(point -> subscription.equals(point.getLabels().get("subscription"))
                        && outcome.equals(point.getLabels().get("outcome")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue)
                .sum();
    }

    @Test
    void stringBytesAndJsonRecordHandlersGetTypedValuesAndAnUndecodablePayloadIsDeadLettered(PulsarEndpoints pulsar)
            throws Exception {
        handlerJar("Strings", "String", "delivery.value()", null);
        handlerJar("Bytes", "byte[]", "java.util.Arrays.toString(delivery.value())", null);
        handlerJar("Orders", "Order", "delivery.value().id() + \"/\" + delivery.value().quantity()",
                "package test; public record Order(String id, int quantity) {}");
        long unique = System.nanoTime();
        String strings = "persistent://public/default/strings-" + unique;
        String bytes = "persistent://public/default/bytes-" + unique;
        String orders = "persistent://public/default/json-orders-" + unique;
        Path stringsOut = folder.resolve("strings.out");
        Path bytesOut = folder.resolve("bytes.out");
        Path ordersOut = folder.resolve("orders.out");
        Path file = folder.resolve("settle.yaml");
        Files.writeString(file, "pulsar:\n  serviceUrl: " + pulsar.serviceUrl() + "\nhttp:\n  port: 0\nsubscriptions:\n"
                + subscription("Strings", strings, stringsOut, "")
                + subscription("Bytes", bytes, bytesOut, "")
                + subscription("Orders", orders, ordersOut, "maxAttempts: 2\ndeadLetterTopic: " + orders + "-dlq"));
        Deployment deployment = Preflight.check(file, System.getenv());

        try (deployment;
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5));
                PulsarClient client = PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build()) {
            try (Producer<String> producer = client.newProducer(Schema.STRING).topic(strings).create()) {
                producer.send("héllo");
            }
            try (Producer<byte[]> producer = client.newProducer(Schema.BYTES).topic(bytes).create()) {
                producer.send(new byte[] {0, -1, 42});
            }
            // Raw bytes on the JSON topic: one well-formed order, one that is not JSON at all.
            try (Producer<byte[]> producer = client.newProducer(Schema.BYTES).topic(orders).create()) {
                producer.send("{\"id\":\"o-1\",\"quantity\":3}".getBytes(StandardCharsets.UTF_8));
                producer.newMessage().key("garbage").value("not json".getBytes(StandardCharsets.UTF_8)).send();
            }

            await().atMost(Duration.ofSeconds(30)).until(() -> Files.exists(stringsOut) && Files.exists(bytesOut)
                    && Files.exists(ordersOut));
            assertThat(Files.readAllLines(stringsOut)).containsExactly("java.lang.String|héllo");
            assertThat(Files.readAllLines(bytesOut)).containsExactly("[B|[0, -1, 42]");
            assertThat(Files.readAllLines(ordersOut)).containsExactly("test.Order|o-1/3");

            try (Consumer<byte[]> deadLetters = client.newConsumer(Schema.BYTES).topic(orders + "-dlq")
                    .subscriptionName("check").subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .subscribe()) {
                Message<byte[]> dead = deadLetters.receive(30, TimeUnit.SECONDS);
                assertThat(dead).as("the undecodable payload on the dead-letter topic").isNotNull();
                assertThat(dead.getKey()).isEqualTo("garbage");
                assertThat(new String(dead.getData(), StandardCharsets.UTF_8)).isEqualTo("not json");
            }
            // Both attempts of the undecodable payload failed: counted as errors, not as handler outcomes.
            assertThat(outcomes(settle, "Orders", "error")).isEqualTo(2.0);
            assertThat(outcomes(settle, "Orders", "ack")).isEqualTo(1.0);
        }
    }
}
