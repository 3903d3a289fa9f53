package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.live.JarDigest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.testbroker.EmbeddedPulsar;
import dev.settle.testbroker.Waits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.packages.management.core.common.PackageMetadata;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * {@code jar: function://...} against a real broker with package management and token authentication on: fetched
 * with the manifest's token (a token the broker does not accept is refused, saying so) at start into the
 * package cache with its sha256, verified (and fetched again when the cached copy changed), a new {@code @version}
 * by a manifest reload swapped in with the consumer open, and a version the broker does not have refused with the
 * line it is on.
 */
// One broker of its own at a time beside the shared one: at most two in the failsafe JVM (-Xmx1g), as when the
// classes ran one after another.
// Not on PulsarFixture: its broker requires a token, which this class makes, and so do its clients.
@ResourceLock("a second embedded broker")
class PackagesIT {
    @TempDir
    static Path folder;

    private static final String SUPER_USER = "settle-admin";

    private static EmbeddedPulsar broker;
    private static PulsarAdmin admin;
    private static String token;

    @BeforeAll
    static void startABrokerWithPackageManagement() throws Exception {
        TestTokens tokens = TestTokens.withNewKey();
        token = tokens.token(SUPER_USER, Optional.empty());
        broker = EmbeddedPulsar.start(Map.ofEntries(
                Map.entry("enablePackagesManagement", "true"),
                Map.entry(
                        "packagesManagementStorageProvider",
                        "org.apache.pulsar.packages.management.storage.filesystem.FileSystemPackagesStorageProvider"),
                Map.entry(
                        "STORAGE_PATH",
                        Files.createDirectories(folder.resolve("package-store")).toString()),
                Map.entry("authenticationEnabled", "true"),
                Map.entry(
                        "authenticationProviders",
                        "org.apache.pulsar.broker.authentication.AuthenticationProviderToken"),
                Map.entry("tokenSecretKey", tokens.brokerSecretKey()),
                Map.entry("superUserRoles", SUPER_USER),
                Map.entry("brokerClientAuthenticationPlugin", "org.apache.pulsar.client.impl.auth.AuthenticationToken"),
                Map.entry("brokerClientAuthenticationParameters", "token:" + token)));
        admin = PulsarAdmin.builder()
                .serviceHttpUrl(broker.endpoints().adminUrl())
                .authentication(AuthenticationFactory.token(token))
                .build();
    }

    @AfterAll
    static void stopTheBroker() throws Exception {
        if (admin != null) {
            admin.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    /** A String handler that appends "label value" to the file its config's {@code out} names. */
    private static Path recorder(String jar, String label) {
        return TestJar.at(folder.resolve(jar))
                .source("test.Recorder", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.nio.charset.StandardCharsets;
                        import java.nio.file.*;
                        public class Recorder implements Handler<String> {
                            private Path out;
                            @Override public void open(HandlerContext context) {
                                out = Path.of(context.config().get("out"));
                            }
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                Files.write(out, ("%s " + delivery.value() + "\\n").getBytes(StandardCharsets.UTF_8),
                                        StandardOpenOption.APPEND);
                                return Outcome.ack();
                            }
                        }
                        """.formatted(label))
                .services("test.Recorder")
                .build();
    }

    private static Path manifest(String topic, String jar, Path out) throws Exception {
        return manifest(topic, jar, out, token);
    }

    private static Path manifest(String topic, String jar, Path out, String withToken) throws Exception {
        Files.writeString(folder.resolve("token.txt"), withToken + "\n");
        return Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: %s
                  adminUrl: %s
                  authentication:
                    token: {file: token.txt}
                  packageCache: cache
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                subscriptions:
                  - name: packaged
                    topics: [%s]
                    jar: %s
                    config:
                      out: %s
                """.formatted(
                        broker.endpoints().serviceUrl(), broker.endpoints().adminUrl(), topic, jar, out));
    }

    private static void await(Supplier<Boolean> condition) {
        Waits.until("the condition", Duration.ofSeconds(30), condition::get, () -> "it did not hold");
    }

    private static List<String> lines(Path out) {
        try {
            return Files.readAllLines(out);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aPackageIsFetchedVerifiedAndANewVersionIsSwappedInByAReload() throws Exception {
        Path v1 = recorder("v1.jar", "v1");
        Path v2 = recorder("v2.jar", "v2");
        PackageMetadata metadata =
                PackageMetadata.builder().description("a test handler").build();
        admin.packages().upload(metadata, "function://public/default/recorder@v1", v1.toString());
        admin.packages().upload(metadata, "function://public/default/recorder@v2", v2.toString());
        Path out = Files.createFile(folder.resolve("handled.txt"));
        String topic = "persistent://public/default/packaged-" + System.nanoTime();
        Path file = manifest(topic, "function://public/default/recorder@v1", out);

        Deployment deployment = Preflight.check(file, Map.of());
        Path cached = folder.resolve("cache/function/public/default/recorder/v1.jar");
        assertThat(cached).hasSameBinaryContentAs(v1);
        assertThat(Files.readString(cached.resolveSibling("v1.jar.sha256")).strip())
                .isEqualTo(JarDigest.of(v1));
        try (PulsarClient client = PulsarClient.builder()
                        .serviceUrl(broker.endpoints().serviceUrl())
                        .authentication(AuthenticationFactory.token(token))
                        .build();
                Producer<String> producer = client.newProducer(Schema.STRING)
                        .topic(topic)
                        .enableBatching(false)
                        .create()) {
            Settle settle = Settle.start(deployment, Duration.ofSeconds(5));
            try {
                producer.send("first");
                await(() -> lines(out).contains("v1 first"));
                String consumer = admin.topics()
                        .getStats(topic)
                        .getSubscriptions()
                        .get("packaged")
                        .getConsumers()
                        .get(0)
                        .getConsumerName();

                manifest(topic, "function://public/default/recorder@v2", out);
                long edited = System.nanoTime();
                assertThat(settle.reload(file, Map.of())).isEqualTo(ReloadResult.APPLIED);
                producer.send("second");
                await(() -> lines(out).contains("v2 second"));
                System.out.printf(
                        "[PackagesIT] a new @version: reload (fetch included) and the next message handled in %.0f ms%n",
                        (System.nanoTime() - edited) / 1e6);
                assertThat(admin.topics()
                                .getStats(topic)
                                .getSubscriptions()
                                .get("packaged")
                                .getConsumers()
                                .get(0)
                                .getConsumerName())
                        .as("the consumer stayed open through the swap")
                        .isEqualTo(consumer);
                assertThat(lines(out)).containsExactly("v1 first", "v2 second");
            } finally {
                settle.close();
                settle.deployment().close();
            }
        }

        // The cached copy changed on disk: fetched again at the next start, not trusted.
        Files.write(cached, new byte[] {1, 2, 3});
        manifest(topic, "function://public/default/recorder@v1", out);
        try (Deployment again = Preflight.check(file, Map.of())) {
            assertThat(again.handler("packaged").className()).isEqualTo("test.Recorder");
        }
        assertThat(cached).hasSameBinaryContentAs(v1);

        // A token the broker does not take: refused, saying why.
        manifest(
                topic,
                "function://public/default/recorder@v2",
                out,
                TestTokens.withNewKey().token(SUPER_USER, Optional.empty()));
        Files.delete(folder.resolve("cache/function/public/default/recorder/v2.jar"));
        assertThatThrownBy(() -> Preflight.check(file, Map.of()))
                .isInstanceOf(ManifestException.class)
                .hasMessageContaining("answered 401")
                .hasMessageContaining("pulsar.authentication is not allowed to download packages of public/default");

        // A version the broker does not have: refused at the line of the jar.
        manifest(topic, "function://public/default/recorder@v9", out);
        assertThatThrownBy(() -> Preflight.check(file, Map.of()))
                .isInstanceOf(ManifestException.class)
                .hasMessageMatching("(?s).*settle\\.yaml:\\d+:\\d+: subscriptions\\[0\\]\\.jar: cannot fetch package"
                        + " function://public/default/recorder@v9: .* answered 404.*upload it.*");
    }
}
