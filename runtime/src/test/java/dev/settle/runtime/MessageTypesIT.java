package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.SchemaConflictException;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.io.IOException;
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
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The handler's type argument decides the schema: String, byte[] and a record of the handler's own JAR each get
 * correctly typed values from the real broker; a payload that cannot be decoded takes the failure path.
 */
class MessageTypesIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @TempDir
    Path folder;

    /** A handler of {@code type} that appends "class-name|value" lines to the file in config "out". */
    private void handlerJar(String name, String type, String show, String extraSource) {
        lineHandlerJar(name, type, "delivery.value().getClass().getName() + \"|\" + " + show, extraSource);
    }

    /** A handler of {@code type} that appends the line {@code line} (a Java expression) to the file in "out". */
    private void lineHandlerJar(String name, String type, String line, String extraSource) {
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
                                String line = %s + "\\n";
                                Files.writeString(out, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                                return Outcome.ack();
                            }
                        }
                        """.formatted(name, type, type, line))
                .services("test." + name);
        if (extraSource != null) {
            jar.source("test.Order", extraSource);
        }
        jar.build();
    }

    private static String subscription(String name, String topic, Path out, String extra) {
        return subscription(name, name, topic, out, extra);
    }

    private static String subscription(String name, String jar, String topics, Path out, String extra) {
        return """
                  - name: %s
                    topics: [%s]
                    jar: %s.jar
                    config:
                      out: %s
                %s
                """.formatted(name, topics, jar, out, extra.indent(4).stripTrailing());
    }

    private Path manifest(String... subscriptions) throws IOException {
        return Files.writeString(
                folder.resolve("settle.yaml"),
                "pulsar:\n  serviceUrl: " + pulsar.endpoints().serviceUrl() + "\nhttp:\n  port: 0\nsubscriptions:\n"
                        + String.join("", subscriptions));
    }

    private static void publish(PulsarClient client, String topic, byte[]... payloads) throws IOException {
        try (Producer<byte[]> producer =
                client.newProducer(Schema.BYTES).topic(topic).create()) {
            for (byte[] payload : payloads) {
                producer.send(payload);
            }
        }
    }

    private static void publish(PulsarClient client, String topic, String... values) throws IOException {
        try (Producer<String> producer =
                client.newProducer(Schema.STRING).topic(topic).create()) {
            for (String value : values) {
                producer.send(value);
            }
        }
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The one message on {@code deadLetterTopic}, as its key and payload. */
    private static Message<byte[]> deadLetter(PulsarClient client, String deadLetterTopic) throws IOException {
        try (Consumer<byte[]> deadLetters = client.newConsumer(Schema.BYTES)
                .topic(deadLetterTopic)
                .subscriptionName("check")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            Message<byte[]> dead = deadLetters.receive(30, TimeUnit.SECONDS);
            assertThat(dead).as("a message on " + deadLetterTopic).isNotNull();
            return dead;
        }
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
    void stringBytesAndJsonRecordHandlersGetTypedValuesAndAnUndecodablePayloadIsDeadLettered() throws Exception {
        handlerJar("Strings", "String", "delivery.value()", null);
        handlerJar("Bytes", "byte[]", "java.util.Arrays.toString(delivery.value())", null);
        handlerJar(
                "Orders",
                "Order",
                "delivery.value().id() + \"/\" + delivery.value().quantity()",
                "package test; public record Order(String id, int quantity) {}");
        long unique = System.nanoTime();
        String strings = "persistent://public/default/strings-" + unique;
        String bytes = "persistent://public/default/bytes-" + unique;
        String orders = "persistent://public/default/json-orders-" + unique;
        Path stringsOut = folder.resolve("strings.out");
        Path bytesOut = folder.resolve("bytes.out");
        Path ordersOut = folder.resolve("orders.out");
        Path file = folder.resolve("settle.yaml");
        Files.writeString(
                file,
                "pulsar:\n  serviceUrl: " + pulsar.endpoints().serviceUrl() + "\nhttp:\n  port: 0\nsubscriptions:\n"
                        + subscription("Strings", strings, stringsOut, "")
                        + subscription("Bytes", bytes, bytesOut, "")
                        + subscription(
                                "Orders", orders, ordersOut, "maxAttempts: 2\ndeadLetterTopic: " + orders + "-dlq"));
        Deployment deployment = Preflight.check(file, System.getenv());

        try (deployment;
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            // Every consumer subscribed first: the Orders one registers the topic's JSON schema, which the broker
            // refuses on a topic a BYTES producer made active before it (a loaded build once got there first).
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200);
            PulsarClient client = pulsar.client();
            try (Producer<String> producer =
                    client.newProducer(Schema.STRING).topic(strings).create()) {
                producer.send("héllo");
            }
            try (Producer<byte[]> producer =
                    client.newProducer(Schema.BYTES).topic(bytes).create()) {
                producer.send(new byte[] {0, -1, 42});
            }
            // Raw bytes on the JSON topic: one well-formed order, one that is not JSON at all.
            try (Producer<byte[]> producer =
                    client.newProducer(Schema.BYTES).topic(orders).create()) {
                producer.send("{\"id\":\"o-1\",\"quantity\":3}".getBytes(StandardCharsets.UTF_8));
                producer.newMessage()
                        .key("garbage")
                        .value("not json".getBytes(StandardCharsets.UTF_8))
                        .send();
            }

            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Files.exists(stringsOut) && Files.exists(bytesOut) && Files.exists(ordersOut));
            assertThat(Files.readAllLines(stringsOut)).containsExactly("java.lang.String|héllo");
            assertThat(Files.readAllLines(bytesOut)).containsExactly("[B|[0, -1, 42]");
            assertThat(Files.readAllLines(ordersOut)).containsExactly("test.Order|o-1/3");

            try (Consumer<byte[]> deadLetters = client.newConsumer(Schema.BYTES)
                    .topic(orders + "-dlq")
                    .subscriptionName("check")
                    .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                    .subscribe()) {
                Message<byte[]> dead = deadLetters.receive(30, TimeUnit.SECONDS);
                assertThat(dead)
                        .as("the undecodable payload on the dead-letter topic")
                        .isNotNull();
                assertThat(dead.getKey()).isEqualTo("garbage");
                assertThat(new String(dead.getData(), StandardCharsets.UTF_8)).isEqualTo("not json");
            }
            // Both attempts of the undecodable payload failed: counted as errors, not as handler outcomes.
            assertThat(outcomes(settle, "Orders", "error")).isEqualTo(2.0);
            assertThat(outcomes(settle, "Orders", "ack")).isEqualTo(1.0);
        }
    }

    @Test
    void aStringHandlerReadsTopicsOfPlainBytesOfStringsAndWithNoSchemaYetAndADeclaredStringSchemaReadsAStringTopic()
            throws Exception {
        handlerJar("Strings", "String", "delivery.value()", null);
        long unique = System.nanoTime();
        String plain = "persistent://public/default/plain-bytes-" + unique;
        String typed = "persistent://public/default/typed-string-" + unique;
        String fresh = "persistent://public/default/fresh-" + unique;
        String declared = "persistent://public/default/declared-string-" + unique;
        Path plainOut = folder.resolve("plain.out");
        Path typedOut = folder.resolve("typed.out");
        Path freshOut = folder.resolve("fresh.out");
        Path declaredOut = folder.resolve("declared.out");
        PulsarClient client = pulsar.client();
        // Messages already on the topics before Settle subscribes: a topic holding schema-less messages refuses
        // a consumer that would register a schema.
        publish(client, plain, utf8("plain héllo"));
        publish(client, typed, "typed héllo");
        publish(client, declared, "declared héllo");
        Deployment deployment = Preflight.check(
                manifest(
                        subscription("plain", "Strings", plain, plainOut, ""),
                        subscription("typed", "Strings", typed, typedOut, ""),
                        subscription("fresh", "Strings", fresh, freshOut, ""),
                        subscription("declared", "Strings", declared, declaredOut, "schema: string")),
                System.getenv());

        try (deployment;
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            // Nothing was registered on the fresh topic: producers of either kind may come first.
            publish(client, fresh, "late string");
            publish(client, fresh, utf8("late bytes"));

            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Files.exists(plainOut)
                            && Files.exists(typedOut)
                            && Files.exists(declaredOut)
                            && Files.exists(freshOut)
                            && Files.readAllLines(freshOut).size() == 2);
            assertThat(Files.readAllLines(plainOut)).containsExactly("java.lang.String|plain héllo");
            assertThat(Files.readAllLines(typedOut)).containsExactly("java.lang.String|typed héllo");
            assertThat(Files.readAllLines(declaredOut)).containsExactly("java.lang.String|declared héllo");
            assertThat(Files.readAllLines(freshOut))
                    .containsExactly("java.lang.String|late string", "java.lang.String|late bytes");
            for (String subscription : new String[] {"plain", "typed", "fresh", "declared"}) {
                assertThat(outcomes(settle, subscription, "error"))
                        .as(subscription)
                        .isZero();
            }
        }
    }

    @Test
    void aPayloadThatIsNotUtf8ForAStringHandlerOrIsJsonNullNeverReachesTheHandlerAndIsAFailure() throws Exception {
        handlerJar("Strings", "String", "delivery.value()", null);
        // Writes whatever it gets, null included, and acknowledges it: a null reaching it would show up as "null".
        lineHandlerJar(
                "Orders",
                "Order",
                "String.valueOf(delivery.value())",
                "package test; public record Order(String id, int quantity) {}");
        long unique = System.nanoTime();
        String text = "persistent://public/default/text-" + unique;
        String orders = "persistent://public/default/null-orders-" + unique;
        Path textOut = folder.resolve("text.out");
        Path ordersOut = folder.resolve("orders.out");
        Deployment deployment = Preflight.check(
                manifest(
                        subscription(
                                "Strings",
                                "Strings",
                                text,
                                textOut,
                                "maxAttempts: 2\ndeadLetterTopic: " + text + "-dlq"),
                        subscription(
                                "Orders",
                                "Orders",
                                orders,
                                ordersOut,
                                "maxAttempts: 2\ndeadLetterTopic: " + orders + "-dlq")),
                System.getenv());

        try (deployment;
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            PulsarClient client = pulsar.client();
            try (Producer<byte[]> producer =
                    client.newProducer(Schema.BYTES).topic(text).create()) {
                producer.send(utf8("fine"));
                // 0xC3 opens a two-byte sequence that '(' does not continue: Schema.STRING would make it "\uFFFD(".
                producer.newMessage()
                        .key("malformed")
                        .value(new byte[] {(byte) 0xC3, '('})
                        .send();
            }
            try (Producer<byte[]> producer =
                    client.newProducer(Schema.BYTES).topic(orders).create()) {
                producer.send(utf8("{\"id\":\"o-1\",\"quantity\":3}"));
                producer.newMessage().key("null").value(utf8("null")).send();
            }

            Message<byte[]> nothing = deadLetter(client, orders + "-dlq");
            assertThat(nothing.getKey()).isEqualTo("null");
            assertThat(new String(nothing.getData(), StandardCharsets.UTF_8)).isEqualTo("null");
            Message<byte[]> malformed = deadLetter(client, text + "-dlq");
            assertThat(malformed.getKey()).isEqualTo("malformed");
            assertThat(malformed.getData()).containsExactly(0xC3, '(');

            assertThat(Files.readAllLines(textOut)).containsExactly("java.lang.String|fine");
            assertThat(Files.readAllLines(ordersOut)).containsExactly("Order[id=o-1, quantity=3]");
            assertThat(outcomes(settle, "Strings", "error")).isEqualTo(2.0);
            assertThat(outcomes(settle, "Strings", "ack")).isEqualTo(1.0);
            assertThat(outcomes(settle, "Orders", "error")).isEqualTo(2.0);
            assertThat(outcomes(settle, "Orders", "ack")).isEqualTo(1.0);
        }
    }

    @Test
    void aHandlerWhoseSchemaTheTopicRefusesFailsToStartWithASchemaConflictNamingTheTopicsAndTheFix() throws Exception {
        handlerJar(
                "Orders",
                "Order",
                "delivery.value().id()",
                "package test; public record Order(String id, int quantity) {}");
        handlerJar("Strings", "String", "delivery.value()", null);
        long unique = System.nanoTime();
        String fresh = "persistent://public/default/conflict-fresh-" + unique;
        String typed = "persistent://public/default/conflict-string-" + unique;
        String plain = "persistent://public/default/conflict-bytes-" + unique;
        PulsarClient client = pulsar.client();
        publish(client, typed, "a string");
        publish(client, plain, utf8("plain bytes"));

        // A JSON handler on two topics, one of them holding STRING: the conflict names both and the broker's words.
        Deployment json = Preflight.check(
                manifest(subscription("orders", "Orders", fresh + ", " + typed, folder.resolve("orders.out"), "")),
                System.getenv());
        SchemaConflictException refused;
        try (json;
                Settle settle = Settle.start(json, Duration.ofSeconds(1))) {
            refused = conflictOf(settle);
        }
        assertThat(refused).as("the runtime stops on a schema conflict").isNotNull();
        System.out.println("json on string: " + refused.getMessage());
        assertThat(refused.getMessage())
                .startsWith(
                        "schema conflict: subscription 'orders' on " + fresh + "," + typed + " reads messages as JSON")
                .contains("STRING")
                .contains("change 'schema:'")
                .contains("byte[]");

        // A declared string schema still registers STRING, which a topic of plain bytes refuses.
        Deployment declared = Preflight.check(
                manifest(subscription("declared", "Strings", plain, folder.resolve("declared.out"), "schema: string")),
                System.getenv());
        try (declared;
                Settle settle = Settle.start(declared, Duration.ofSeconds(1))) {
            refused = conflictOf(settle);
        }
        assertThat(refused).as("the runtime stops on a schema conflict").isNotNull();
        System.out.println("declared string on bytes: " + refused.getMessage());
        assertThat(refused.getMessage())
                .startsWith("schema conflict: subscription 'declared' on " + plain + " reads messages as STRING")
                .contains("empty(BYTES)");
    }

    /** The schema conflict that stops {@code settle}: its subscription is refused while it subscribes. */
    private static SchemaConflictException conflictOf(Settle settle) throws Exception {
        Throwable error = settle.fatalError()
                .get(60, java.util.concurrent.TimeUnit.SECONDS)
                .error();
        assertThat(error).isInstanceOf(dev.settle.runtime.driver.SubscribeRefusedException.class);
        assertThat(error.getCause()).isInstanceOf(SchemaConflictException.class);
        return (SchemaConflictException) error.getCause();
    }
}
