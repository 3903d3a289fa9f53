package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.common.policies.data.AutoTopicCreationOverride;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A function whose output topic cannot be written (missing, with topic auto-creation off) stays unready and says
 * why on /readyz, handles nothing (so nothing is failed or dead-lettered), and starts once the topic exists: the
 * output producer is created when the subscription starts, and retried.
 */
class OutputTopicReadinessIT {
    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void aMissingOutputTopicKeepsTheSubscriptionUnreadyUntilItExists() throws Exception {
        FunctionJars.identity(folder);
        String namespace = "public/" + PulsarFixture.unique("no-auto");
        String in = pulsar.topic("ready-in");
        String out = "persistent://" + namespace + "/ready-out";
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        admin.namespaces().createNamespace(namespace);
        admin.namespaces()
                .setAutoTopicCreation(
                        namespace,
                        AutoTopicCreationOverride.builder()
                                .allowAutoTopicCreation(false)
                                .topicType("non-partitioned")
                                .build());
        admin.topics().createNonPartitionedTopic(in);
        admin.topics().createSubscription(in, "identity", MessageId.earliest);
        pulsar.publish(in, 5, i -> "m" + i);
        Path manifest = folder.resolve("identity.yaml");
        Files.writeString(manifest, """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                subscriptions:
                  - name: identity
                    topics: [%s]
                    jar: identity.jar
                    function: com.example.identity.Identity
                    output: %s
                    maxAttempts: 2
                    deadLetterTopic: %s-dlq
                """.formatted(pulsar.endpoints().serviceUrl(), in, out, in));
        try (Deployment deployment = Preflight.check(manifest, Map.of());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            int port = settle.httpPort();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> get(port, "/readyz").body().contains("cannot be written"));
            HttpResponse<String> unready = get(port, "/readyz");
            assertThat(unready.statusCode()).isEqualTo(503);
            assertThat(unready.body()).contains("subscription 'identity'").contains(out);
            // Waiting, not failing: nothing was handled, so nothing went to the dead letters.
            Waits.during(
                    "all five inputs unacknowledged while unready",
                    Duration.ofSeconds(2),
                    () -> pulsar.backlog(in, "identity") == 5,
                    () -> "a backlog of " + pulsar.backlog(in, "identity"));
            assertThat(get(port, "/livez").statusCode()).isEqualTo(200);

            admin.topics().createNonPartitionedTopic(out);
            admin.topics().createSubscription(out, "check", MessageId.earliest);
            // The producer is asked for again every 5 s: then the subscription starts and drains.
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> get(port, "/readyz").statusCode() == 200);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> admin.topics()
                                    .getStats(in)
                                    .getSubscriptions()
                                    .get("identity")
                                    .getMsgBacklog()
                            == 0);
            assertThat(FunctionTopics.readAll(client, out, "check"))
                    .extracting(Message::getValue)
                    .containsExactly("m0", "m1", "m2", "m3", "m4");
        }
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
