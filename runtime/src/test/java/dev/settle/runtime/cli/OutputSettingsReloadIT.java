package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.ReloadResult;
import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.common.policies.data.PublisherStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the admin API on, a manifest reload that changes {@code output:} keeps the running generation (the handler
 * goes on) and restarts the consumer; the handler's publishers then send through new producers made with the new
 * settings, not the old ones: the output topic's publisher is another one after the reload.
 */
class OutputSettingsReloadIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @TempDir
    Path folder;

    @Test
    void withTheAdminApiAReloadThatChangesOutputSettingsMakesNewProducers() throws Exception {
        TestJar.at(folder.resolve("forward.jar"))
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
        Files.writeString(folder.resolve("token.txt"), "a-token-for-the-test-of-32-characters\n");
        String in = pulsar.topic("output-reload-in");
        String out = pulsar.topic("output-reload-out");
        Path file = folder.resolve("settle.yaml");
        Files.writeString(file, manifest(in, out, "batching: false"));

        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        try (Consumer<String> outputs = client.newConsumer(Schema.STRING)
                        .topic(out)
                        .subscriptionName("check")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .subscribe();
                Producer<String> inputs =
                        client.newProducer(Schema.STRING).topic(in).create();
                Deployment deployment = Preflight.check(file, System.getenv());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            inputs.send("before");
            assertThat(receive(outputs)).isEqualTo("before");
            List<String> before = publishers(admin, out);
            assertThat(before).hasSize(1);

            Files.writeString(file, manifest(in, out, "compression: zstd"));
            assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.APPLIED);
            inputs.send("after");
            assertThat(receive(outputs)).isEqualTo("after");
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> publishers(admin, out).size() == 1);
            assertThat(publishers(admin, out))
                    .as("the output topic's producer after the reload, made with the new settings")
                    .doesNotContainAnyElementsOf(before);
            assertThat(settle.live()
                            .orElseThrow()
                            .status("sub")
                            .orElseThrow()
                            .active()
                            .number())
                    .as("the running generation went on")
                    .isEqualTo(1);
        }
    }

    private String manifest(String in, String out, String outputSetting) {
        return """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                admin:
                  port: 0
                  token: {file: token.txt}
                  dataDir: data
                subscriptions:
                  - name: sub
                    topics: [%s]
                    jar: forward.jar
                    output:
                      %s
                    config:
                      out: %s
                """.formatted(pulsar.endpoints().serviceUrl(), in, outputSetting, out);
    }

    private static String receive(Consumer<String> outputs) throws Exception {
        Message<String> message = outputs.receive(30, TimeUnit.SECONDS);
        assertThat(message).as("an output within 30 s").isNotNull();
        outputs.acknowledge(message);
        return message.getValue();
    }

    /** The names of the output topic's producers now connected. */
    private static List<String> publishers(PulsarAdmin admin, String topic) throws Exception {
        return admin.topics().getStats(topic).getPublishers().stream()
                .map(PublisherStats::getProducerName)
                .toList();
    }
}
