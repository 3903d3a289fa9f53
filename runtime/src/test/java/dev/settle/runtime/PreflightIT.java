package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.cli.Main;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.EmbeddedPulsar;
import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import dev.settle.testbroker.Waits;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.AuthAction;
import org.apache.pulsar.common.policies.data.AutoTopicCreationOverride;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Issue 48: {@code settle preflight} against real brokers. One broker of its own, misconfigured in every way the
 * matrix needs at once (no transaction coordinator, no batch-index acknowledgement, no package management, no
 * delayed delivery, an unacked limit of 100, authorization on), shared by the cases, each of which names the broker
 * setting it finds; and the shared test broker, set up right, where every check is ok.
 */
// The shared broker for the case set up right; for the rest a broker of its own, misconfigured as no other test wants.
@ResourceLock("a second embedded broker")
@ExtendWith(PulsarBroker.class)
class PreflightIT {
    private static final String SUPER_USER = "admin";
    private static final String ROLE = "orders";

    @TempDir
    static Path folder;

    private static EmbeddedPulsar broker;
    private static PulsarAdmin admin;
    private static PulsarClient producers;
    private static Path superUserToken;
    private static Path roleToken;

    @BeforeAll
    static void startAMisconfiguredBroker() throws Exception {
        TestTokens tokens = TestTokens.withNewKey();
        String superUser = tokens.token(SUPER_USER, Optional.empty());
        broker = EmbeddedPulsar.start(Map.ofEntries(
                Map.entry("transactionCoordinatorEnabled", "false"),
                Map.entry("acknowledgmentAtBatchIndexLevelEnabled", "false"),
                Map.entry("enablePackagesManagement", "false"),
                Map.entry("delayedDeliveryEnabled", "false"),
                Map.entry("maxUnackedMessagesPerConsumer", "100"),
                Map.entry("authenticationEnabled", "true"),
                Map.entry("authorizationEnabled", "true"),
                Map.entry(
                        "authenticationProviders",
                        "org.apache.pulsar.broker.authentication.AuthenticationProviderToken"),
                Map.entry("tokenSecretKey", tokens.brokerSecretKey()),
                Map.entry("superUserRoles", SUPER_USER),
                Map.entry("brokerClientAuthenticationPlugin", "org.apache.pulsar.client.impl.auth.AuthenticationToken"),
                Map.entry("brokerClientAuthenticationParameters", "token:" + superUser)));
        superUserToken = Files.writeString(folder.resolve("admin.token"), superUser);
        roleToken = Files.writeString(folder.resolve("orders.token"), tokens.token(ROLE, Optional.empty()));
        admin = PulsarAdmin.builder()
                .serviceHttpUrl(broker.endpoints().adminUrl())
                .authentication(AuthenticationFactory.token(superUser))
                .build();
        producers = PulsarClient.builder()
                .serviceUrl(broker.endpoints().serviceUrl())
                .authentication(AuthenticationFactory.token(superUser))
                .build();
    }

    @AfterAll
    static void stopTheBroker() throws Exception {
        for (AutoCloseable closeable : new AutoCloseable[] {producers, admin, broker}) {
            if (closeable != null) {
                closeable.close();
            }
        }
    }

    /** What a command printed, and its exit code. */
    record Ran(int exit, String out, String err) {
        List<String> lines() {
            return out.lines().toList();
        }

        /** The line of one check of one subscription. */
        String line(String scope, String check) {
            return lines().stream()
                    .filter(line -> line.startsWith(scope + "  " + check + "  "))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(
                            "no line for " + scope + " " + check + " in:\n" + out + "\nstderr:\n" + err));
        }
    }

    private static Ran settle(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.execute(
                List.of(args),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Ran(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static String topic(String name) {
        return "persistent://public/default/" + name + "-" + System.nanoTime();
    }

    private static Path manifest(String name, Path token, String subscriptions) throws Exception {
        return manifest(name, broker.endpoints(), "authentication:\n  token: {file: " + token + "}\n", subscriptions);
    }

    private static Path manifest(String name, PulsarEndpoints endpoints, String pulsar, String subscriptions)
            throws Exception {
        return Files.writeString(
                folder.resolve(name + ".yaml"),
                "pulsar:\n"
                        + ("serviceUrl: " + endpoints.serviceUrl() + "\nadminUrl: " + endpoints.adminUrl() + "\n"
                                        + pulsar)
                                .indent(2)
                        + "http:\n  port: 0\n"
                        + subscriptions);
    }

    @Test
    void exactlyOnceWithoutTheTransactionCoordinatorRefusesNamingTheSettingAndWarnsOfDeduplication() throws Exception {
        String input = topic("eo-in");
        String output = topic("eo-out");
        admin.topics().createNonPartitionedTopic(input);
        admin.topics().createNonPartitionedTopic(output);
        Path file = manifest("coordinator", superUserToken, """
                subscriptions:
                  - name: enrich
                    topics: [%s]
                    function: com.example.Enrich
                    jar: enrich.jar
                    output: %s
                    outputSchema: string
                    guarantee: exactly-once
                """.formatted(input, output));

        Ran ran = settle("preflight", file.toString());

        assertThat(ran.exit()).as(ran.out() + ran.err()).isEqualTo(Main.INVALID);
        assertThat(ran.line("enrich", "transaction-coordinator"))
                .contains("failed (refuses)", "transactionCoordinatorEnabled=false");
        assertThat(ran.line("enrich", "deduplication")).contains("failed (warning)", "brokerDeduplicationEnabled");
        assertThat(ran.line("enrich", "delayed-delivery")).contains("failed (warning)", "delayedDeliveryEnabled");
        assertThat(ran.line("enrich", "output-topic")).contains("ok", "may produce to " + output);
        assertThat(ran.err()).contains("failed for a guarantee");
    }

    @Test
    void exactlyOnceOverBatchedInputWithoutBatchIndexAcknowledgementRefuses() throws Exception {
        String input = topic("batched");
        try (Producer<String> batching = producers
                .newProducer(Schema.STRING)
                .topic(input)
                .enableBatching(true)
                .batchingMaxPublishDelay(1, TimeUnit.SECONDS)
                .create()) {
            List<java.util.concurrent.CompletableFuture<?>> sent = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                sent.add(batching.sendAsync("m" + i));
            }
            batching.flush();
            java.util.concurrent.CompletableFuture.allOf(sent.toArray(java.util.concurrent.CompletableFuture[]::new))
                    .get(30, TimeUnit.SECONDS);
        }
        Path file = manifest("batched", superUserToken, """
                subscriptions:
                  - name: batched
                    topics: [%s]
                    jar: handler.jar
                    guarantee: exactly-once
                """.formatted(input));

        Ran ran = settle("preflight", file.toString());

        assertThat(ran.exit()).isEqualTo(Main.INVALID);
        assertThat(ran.line("batched", "batch-index-ack"))
                .contains("failed (refuses)", "acknowledgmentAtBatchIndexLevelEnabled=false", "apache/pulsar#17061");
    }

    @Test
    void batchIndexAckInTheManifestWithoutTheBrokersRefusesAtLeastOnceToo() throws Exception {
        String input = topic("client-side-only");
        admin.topics().createNonPartitionedTopic(input);
        Path file = manifest("client-side-only", superUserToken, """
                subscriptions:
                  - name: capped
                    topics: [%s]
                    jar: handler.jar
                    batchIndexAck: true
                """.formatted(input));

        Ran ran = settle("preflight", file.toString());

        assertThat(ran.exit()).isEqualTo(Main.INVALID);
        assertThat(ran.line("capped", "batch-index-ack"))
                .contains("failed (refuses)", "batchIndexAck: true", "acknowledgmentAtBatchIndexLevelEnabled=false");
    }

    @Test
    void aPulsarCodeStoreWithoutPackageManagementRefuses() throws Exception {
        String input = topic("code");
        admin.topics().createNonPartitionedTopic(input);
        Files.writeString(folder.resolve("admin-api.token"), "0123456789abcdef0123456789abcdef-preflight\n");
        Path file = manifest("packages", superUserToken, """
                admin:
                  token: {file: admin-api.token}
                  dataDir: %s
                  codeStore: pulsar
                  codeNamespace: public/default
                subscriptions:
                  - name: code
                    topics: [%s]
                    jar: handler.jar
                """.formatted(folder.resolve("data"), input));

        Ran ran = settle("preflight", file.toString());

        assertThat(ran.exit()).as(ran.out() + ran.err()).isEqualTo(Main.INVALID);
        assertThat(ran.line("admin.codeStore", "package-management"))
                .contains("failed (refuses)", "enablePackagesManagement=false");
    }

    @Test
    void aRoleThatMayNotProduceToTheDeadLetterTopicRefusesAndWhatOnlyASuperuserMayReadIsCouldNotCheck()
            throws Exception {
        String input = topic("role-in");
        String letters = topic("role-dlq");
        admin.topics().createNonPartitionedTopic(input);
        admin.topics().createNonPartitionedTopic(letters);
        admin.topics().createSubscription(input, "capped", org.apache.pulsar.client.api.MessageId.earliest);
        admin.topics().grantPermission(input, ROLE, Set.of(AuthAction.consume));
        Path file = manifest("role", roleToken, """
                subscriptions:
                  - name: capped
                    topics: [%s]
                    jar: handler.jar
                    maxAttempts: 3
                    deadLetterTopic: %s
                """.formatted(input, letters));

        Ran ran = settle("preflight", file.toString());

        assertThat(ran.exit()).as(ran.out() + ran.err()).isEqualTo(Main.INVALID);
        assertThat(ran.line("capped", "consume-permission")).contains("ok");
        assertThat(ran.line("capped", "dead-letter-topic"))
                .contains("failed (refuses)", "may not produce to " + letters, "--actions produce");
        assertThat(ran.line("capped", "batch-index-ack"))
                .contains("could-not-check", "acknowledgmentAtBatchIndexLevelEnabled", "superuser");
    }

    @Test
    void anIncompatibleOutputSchemaRefuses() throws Exception {
        String input = topic("schema-in");
        String output = topic("schema-out");
        admin.topics().createNonPartitionedTopic(input);
        // A JSON schema registered by a producer of another application.
        producers.newProducer(Schema.JSON(Order.class)).topic(output).create().close();
        Path file = manifest("schema", superUserToken, """
                subscriptions:
                  - name: upper
                    topics: [%s]
                    function: com.example.Upper
                    jar: upper.jar
                    output: %s
                    outputSchema: string
                """.formatted(input, output));

        Ran ran = settle("preflight", file.toString());

        assertThat(ran.exit()).as(ran.out() + ran.err()).isEqualTo(Main.INVALID);
        assertThat(ran.line("upper", "output-schema"))
                .contains("failed (refuses)", "cannot be published to " + output, "Incompatible schema", "JSON");
    }

    /** The schema another application gave the output topic. */
    public record Order(String id, int quantity) {}

    @Test
    void aMissingSubscriptionRefusesOnlyADeploymentThatScalesToZero() throws Exception {
        String input = topic("not-yet");
        admin.topics().createNonPartitionedTopic(input);
        Path file = manifest("not-yet", superUserToken, """
                subscriptions:
                  - name: later
                    topics: [%s]
                    jar: handler.jar
                    receiverQueueSize: 50
                """.formatted(input));

        Ran plain = settle("preflight", file.toString());
        Ran scaled = settle("preflight", "--scale-to-zero", file.toString());

        assertThat(plain.exit()).as(plain.out() + plain.err()).isZero();
        assertThat(plain.line("later", "subscription")).contains("failed (warning)", "does not exist");
        assertThat(scaled.exit()).isEqualTo(Main.INVALID);
        assertThat(scaled.line("later", "subscription"))
                .contains("failed (refuses)", "create-subscription -s later " + input);
    }

    @Test
    void aMissingTopicInANamespaceThatCreatesNoneRefuses() throws Exception {
        String namespace = "public/no-creation-" + System.nanoTime();
        admin.namespaces().createNamespace(namespace);
        admin.namespaces()
                .setAutoTopicCreation(
                        namespace,
                        AutoTopicCreationOverride.builder()
                                .allowAutoTopicCreation(false)
                                .build());
        String input = "persistent://" + namespace + "/missing";
        Path file = manifest("missing", superUserToken, """
                subscriptions:
                  - name: missing
                    topics: [%s]
                    jar: handler.jar
                """.formatted(input));

        Ran ran = settle("validate", "--skip-jar-check", "--broker", file.toString());

        assertThat(ran.exit()).as(ran.out() + ran.err()).isEqualTo(Main.INVALID);
        assertThat(ran.line("missing", "input-topic"))
                .contains("failed (refuses)", "does not exist", "allowAutoTopicCreation=false");
    }

    @Test
    void anUnackedLimitBelowTheReceiverQueueIsAWarning() throws Exception {
        String input = topic("unacked");
        admin.topics().createNonPartitionedTopic(input);
        admin.topics().createSubscription(input, "queued", org.apache.pulsar.client.api.MessageId.earliest);
        Path file = manifest("unacked", superUserToken, """
                subscriptions:
                  - name: queued
                    topics: [%s]
                    jar: handler.jar
                """.formatted(input));

        Ran ran = settle("preflight", file.toString());

        assertThat(ran.exit()).as(ran.out() + ran.err()).isZero();
        assertThat(ran.line("queued", "unacked-limit"))
                .contains("failed (warning)", "maxUnackedMessagesPerConsumer=100", "receiver queue (1000)");
        assertThat(ran.line("queued", "subscription")).contains("ok");
    }

    @Test
    void atStartAFailedCheckLeavesTheSubscriptionUnreadySayingWhyAndTheOthersRun() throws Exception {
        Path jar = TestJar.at(folder.resolve("ack.jar"))
                .source("test.Ack", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Ack implements Handler<String> {
                            @Override public Outcome handle(Delivery<String> delivery) {
                                return Outcome.ack();
                            }
                        }
                        """)
                .services("test.Ack")
                .build();
        String refused = topic("start-refused");
        String fine = topic("start-fine");
        admin.topics().createNonPartitionedTopic(refused);
        admin.topics().createNonPartitionedTopic(fine);
        Path file = manifest("start", superUserToken, """
                subscriptions:
                  - name: refused
                    topics: [%s]
                    jar: %s
                    batchIndexAck: true
                  - name: fine
                    topics: [%s]
                    jar: %s
                """.formatted(refused, jar, fine, jar));
        try (Deployment deployment = Preflight.check(file, Map.of());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest readyz = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + settle.httpPort() + "/readyz"))
                    .build();
            Waits.until(
                    "the subscription whose checks pass subscribes",
                    Duration.ofSeconds(60),
                    () -> admin.topics().getSubscriptions(fine).contains("fine"),
                    settle::describeDrivers);
            // The driver reads its reason again at each of its polls, so /readyz names the setting a poll later.
            HttpResponse<String> answer = Waits.until(
                    "/readyz names the broker setting",
                    Duration.ofSeconds(60),
                    () -> http.send(readyz, HttpResponse.BodyHandlers.ofString()),
                    got -> got.body().contains("acknowledgmentAtBatchIndexLevelEnabled=false"));
            assertThat(answer.statusCode()).isEqualTo(503);
            assertThat(answer.body()).contains("subscription 'refused'", "preflight batch-index-ack failed");
            assertThat(admin.topics().getSubscriptions(refused)).doesNotContain("refused");
        }
    }

    @Test
    void aBrokerSetUpRightReportsEveryCheckOk(PulsarEndpoints shared) throws Exception {
        try (PulsarAdmin sharedAdmin =
                PulsarAdmin.builder().serviceHttpUrl(shared.adminUrl()).build()) {
            String namespace = "public/preflight-" + System.nanoTime();
            sharedAdmin.namespaces().createNamespace(namespace);
            sharedAdmin.namespaces().setDeduplicationStatus(namespace, true);
            String input = "persistent://" + namespace + "/in";
            String output = "persistent://" + namespace + "/out";
            String letters = "persistent://" + namespace + "/dlq";
            for (String topic : List.of(input, output, letters)) {
                sharedAdmin.topics().createNonPartitionedTopic(topic);
            }
            sharedAdmin.topics().createSubscription(input, "enrich", org.apache.pulsar.client.api.MessageId.earliest);
            Path file = manifest("green", shared, "", """
                    subscriptions:
                      - name: enrich
                        type: Key_Shared
                        topics: [%s]
                        function: com.example.Enrich
                        jar: enrich.jar
                        output: %s
                        outputSchema: string
                        guarantee: exactly-once
                        batchIndexAck: true
                        maxAttempts: 3
                        deadLetterTopic: %s
                    """.formatted(input, output, letters));

            Ran ran = settle("preflight", "--scale-to-zero", file.toString());

            assertThat(ran.exit()).as(ran.out() + ran.err()).isZero();
            assertThat(ran.lines())
                    .hasSizeGreaterThanOrEqualTo(10)
                    .allSatisfy(line -> assertThat(line).contains("  ok: "));
            assertThat(ran.out())
                    .contains(
                            "transaction-coordinator",
                            "batch-index-ack",
                            "dead-letter-topic",
                            "output-schema",
                            "deduplication",
                            "subscription",
                            "unacked-limit",
                            "delayed-delivery");
        }
    }
}
