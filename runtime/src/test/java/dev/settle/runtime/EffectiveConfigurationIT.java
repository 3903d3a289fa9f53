package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.impl.ConsumerBase;
import org.apache.pulsar.client.impl.ProducerBase;
import org.apache.pulsar.client.impl.conf.ConsumerConfigurationData;
import org.apache.pulsar.client.impl.conf.ProducerConfigurationData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Issue 48: {@code GET /config/effective} on the admin port answers what the live consumer and producers run with,
 * as the client's own objects hold it, for three manifests (one leaving every consumer and output setting at its
 * default), behind the admin token, and without the admin token or the broker token in it.
 */
class EffectiveConfigurationIT {
    private static final String ADMIN_TOKEN = "0123456789abcdef0123456789abcdef-effective";

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @TempDir
    Path folder;

    private Path publisherJar() {
        return TestJar.at(folder.resolve("forward.jar"))
                .source("test.Forward", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Forward implements Handler<String> {
                            private Publisher<String> out;
                            @Override public void open(HandlerContext context) {
                                out = context.publisher(context.config().get("out"), String.class);
                            }
                            @Override public Outcome handle(Delivery<String> delivery) {
                                out.publish(delivery, delivery.value());
                                return Outcome.ack();
                            }
                        }
                        """)
                .services("test.Forward")
                .build();
    }

    /** Starts {@code subscription} (YAML under subscriptions:) with the admin API, publishes one message, and reads. */
    private Map<?, ?> effective(String name, String input, String subscription) throws Exception {
        return effective(name, input, subscription, "");
    }

    private Map<?, ?> effective(String name, String input, String subscription, String pulsarExtra) throws Exception {
        Files.writeString(folder.resolve("admin.token"), ADMIN_TOKEN + "\n");
        Path file = Files.writeString(
                folder.resolve(name + ".yaml"),
                "pulsar:\n" + ("serviceUrl: " + pulsar.endpoints().serviceUrl() + "\n" + pulsarExtra).indent(2)
                        + """
                        http:
                          port: 0
                          bindAddress: 127.0.0.1
                        admin:
                          port: 0
                          token: {file: admin.token}
                          dataDir: %s
                        subscriptions:
                        """.formatted(folder.resolve("data-" + name))
                        + subscription.indent(2));
        Settle settle = InThisJvm.start(pulsar, file);
        pulsar.publish(input, 1, i -> "hello");
        Waits.until(
                "the output producer is made",
                Duration.ofSeconds(60),
                () -> !running(settle, name).outputs().producers().isEmpty(),
                settle::describeDrivers);
        HttpResponse<String> answer = get(settle, ADMIN_TOKEN);
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        assertThat(answer.body()).doesNotContain(ADMIN_TOKEN);
        Path brokerToken = folder.resolve("broker.token");
        if (Files.exists(brokerToken)) {
            assertThat(answer.body())
                    .contains("AuthenticationToken")
                    .doesNotContain(Files.readString(brokerToken).strip());
        }
        assertThat(get(settle, "wrong-" + ADMIN_TOKEN).statusCode()).isEqualTo(401);
        Map<?, ?> json = (Map<?, ?>) new Yaml(new SafeConstructor(new LoaderOptions())).load(answer.body());
        Map<?, ?> one = (Map<?, ?>) ((Map<?, ?>) json.get("subscriptions")).get(name);
        // Equal to the client's own objects, field by field.
        Consumer<?> consumer =
                running(settle, name).driver().orElseThrow().consumer().orElseThrow();
        ConsumerConfigurationData<?> conf = ((ConsumerBase<?>) consumer).getConf();
        Map<?, ?> shown = (Map<?, ?>) one.get("consumer");
        assertThat(shown.get("receiverQueueSize")).isEqualTo(conf.getReceiverQueueSize());
        assertThat(((Number) shown.get("ackTimeoutMillis")).longValue()).isEqualTo(conf.getAckTimeoutMillis());
        assertThat(shown.get("subscriptionType"))
                .isEqualTo(conf.getSubscriptionType().name());
        assertThat(shown.get("batchIndexAckEnabled")).isEqualTo(conf.isBatchIndexAckEnabled());
        Producer<?> producer = running(settle, name).outputs().producers().get(0);
        ProducerConfigurationData produced = ((ProducerBase<?>) producer).getConfiguration();
        Map<?, ?> output = (Map<?, ?>) ((List<?>) one.get("producers")).get(0);
        assertThat(output.get("batchingEnabled")).isEqualTo(produced.isBatchingEnabled());
        assertThat(output.get("compressionType"))
                .isEqualTo(produced.getCompressionType().name());
        assertThat(output.get("maxPendingMessages")).isEqualTo(produced.getMaxPendingMessages());
        // The live consumer runs what the manifest says, so nothing is flagged: listed, counted, and logged.
        assertThat((List<?>) one.get("differences"))
                .as("settings in force that differ")
                .isEmpty();
        assertThat(Exposition.of(settle.metrics().registry())
                        .value("settle_config_differences{subscription=\"" + name + "\"}"))
                .isEqualTo(0.0);
        return one;
    }

    private static RunningSubscription running(Settle settle, String name) {
        return settle.running(name);
    }

    private static HttpResponse<String> get(Settle settle, String token) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(
                                        "http://127.0.0.1:" + settle.adminPort().orElseThrow() + "/config/effective"))
                                .header("Authorization", "Bearer " + token)
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theDefaultsTheManifestLeavesUnsetAreWhatTheClientRunsWith() throws Exception {
        String input = "persistent://public/default/effective-defaults-" + System.nanoTime();
        Map<?, ?> one = effective("defaults", input, """
                - name: defaults
                  topics: [%s]
                  jar: %s
                  config: {out: %s-out}
                """.formatted(input, publisherJar(), input));

        Map<?, ?> consumer = (Map<?, ?>) one.get("consumer");
        assertThat(consumer.get("receiverQueueSize")).isEqualTo(1000);
        assertThat(consumer.get("ackTimeoutMillis")).isEqualTo(0);
        assertThat(consumer.get("subscriptionType")).isEqualTo("Shared");
        assertThat(consumer.get("subscriptionInitialPosition")).isEqualTo("Earliest");
        assertThat(consumer.get("deadLetterPolicy")).isNull();
        assertThat(consumer.get("negativeAckRedeliveryBackoff")).asString().contains("ZeroRedeliveryBackoff");
        Map<?, ?> producer = (Map<?, ?>) ((List<?>) one.get("producers")).get(0);
        assertThat(producer.get("batchingEnabled")).isEqualTo(true);
        assertThat(producer.get("compressionType")).isEqualTo("LZ4");
        assertThat(producer.get("batchingMaxPublishDelayMicros")).isEqualTo(10_000);
    }

    @Test
    void aCappedKeySharedSubscriptionShowsItsQueueAckTimeoutAndDeadLetterPolicy() throws Exception {
        String input = "persistent://public/default/effective-capped-" + System.nanoTime();
        Map<?, ?> one = effective("capped", input, """
                - name: capped
                  type: Key_Shared
                  topics: [%s]
                  jar: %s
                  config: {out: %s-out}
                  receiverQueueSize: 50
                  ackTimeout: 30s
                  maxAttempts: 3
                  deadLetterTopic: %s-dlq
                """.formatted(input, publisherJar(), input, input));

        Map<?, ?> consumer = (Map<?, ?>) one.get("consumer");
        assertThat(consumer.get("receiverQueueSize")).isEqualTo(50);
        assertThat(consumer.get("ackTimeoutMillis")).isEqualTo(30_000);
        assertThat(consumer.get("subscriptionType")).isEqualTo("Key_Shared");
        Map<?, ?> letters = (Map<?, ?>) consumer.get("deadLetterPolicy");
        assertThat(letters.get("maxRedeliverCount")).isEqualTo(2);
        assertThat(letters.get("deadLetterTopic")).isEqualTo(input + "-dlq");
        assertThat(letters.get("initialSubscriptionName")).isEqualTo("capped-dlq");
    }

    @Test
    void anExactlyOnceSubscriptionShowsItsTransactionTimeoutAndNoClientDeadLetterPolicy() throws Exception {
        String input = "persistent://public/default/effective-exactly-once-" + System.nanoTime();
        Map<?, ?> one = effective("once", input, """
                - name: once
                  topics: [%s]
                  jar: %s
                  config: {out: %s-out}
                  guarantee: exactly-once
                  handlerTimeout: 20s
                  maxAttempts: 3
                  deadLetterTopic: %s-dlq
                """.formatted(input, publisherJar(), input, input));

        // commitBatch.maxDelay 10 ms + handlerTimeout 20 s + the 30 s commit margin (docs/exactly-once.md).
        assertThat(((Number) one.get("transactionTimeoutMillis")).longValue()).isEqualTo(50_010L);
        assertThat(((Map<?, ?>) one.get("consumer")).get("deadLetterPolicy")).isNull();
    }

    @Test
    void outputSettingsAreTheProducersAndATokenOfTheBrokerIsNeverShown() throws Exception {
        String input = "persistent://public/default/effective-output-" + System.nanoTime();
        // The shared broker does not authenticate, and ignores the token the client sends.
        String brokerToken = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJlZmZlY3RpdmUifQ.not-a-real-signature";
        Files.writeString(folder.resolve("broker.token"), brokerToken + "\n");
        Map<?, ?> one = effective(
                "output",
                input,
                """
                - name: output
                  topics: [%s]
                  jar: %s
                  config: {out: %s-out}
                  output: {batching: false, compression: zstd, maxPendingMessages: 200}
                """.formatted(input, publisherJar(), input),
                "authentication:\n  token: {file: broker.token}\n");

        // effective() has checked that the answer names the token authentication and does not hold the token.

        Map<?, ?> producer = (Map<?, ?>) ((List<?>) one.get("producers")).get(0);
        assertThat(producer.get("batchingEnabled")).isEqualTo(false);
        assertThat(producer.get("compressionType")).isEqualTo("ZSTD");
        assertThat(producer.get("maxPendingMessages")).isEqualTo(200);
        assertThat(producer.get("topicName")).isEqualTo(input + "-out");
    }
}
