package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.EmbeddedPulsar;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.ConsumerStats;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Settle against a broker that requires authentication, as production brokers do: a token read from a file that is
 * rotated while the runtime runs, and a TLS client certificate. The shared test broker has no authentication, so
 * this class starts a broker of its own with the token and TLS providers, a TLS port, and client certificates
 * required on it; certificates and tokens are made here with the JDK.
 */
// One broker of its own at a time beside the shared one: at most two in the failsafe JVM (-Xmx1g), as when the
// classes ran one after another.
// Not on PulsarFixture: its broker requires tokens and client certificates, which this class makes, and so do its
// clients.
@ResourceLock("a second embedded broker")
class AuthenticationIT {
    private static final String SUPER_USER = "admin";

    @TempDir
    static Path folder;

    private static TestTokens tokens;
    private static TestCertificates certificates;
    private static EmbeddedPulsar broker;
    private static String superUserToken;
    private static PulsarAdmin admin;
    private static PulsarClient producers;

    @BeforeAll
    static void startABrokerThatRequiresAuthentication() throws Exception {
        long started = System.nanoTime();
        certificates = TestCertificates.create(Files.createDirectories(folder.resolve("certificates")), "orders-mtls");
        long certificatesMillis = (System.nanoTime() - started) / 1_000_000;
        tokens = TestTokens.withNewKey();
        superUserToken = tokens.token(SUPER_USER, Optional.empty());
        broker = EmbeddedPulsar.start(Map.ofEntries(
                Map.entry("authenticationEnabled", "true"),
                Map.entry(
                        "authenticationProviders",
                        "org.apache.pulsar.broker.authentication.AuthenticationProviderToken,"
                                + "org.apache.pulsar.broker.authentication.AuthenticationProviderTls"),
                Map.entry("tokenSecretKey", tokens.brokerSecretKey()),
                Map.entry("superUserRoles", SUPER_USER),
                // The standalone creates public/default through the broker's own admin client at start.
                Map.entry("brokerClientAuthenticationPlugin", "org.apache.pulsar.client.impl.auth.AuthenticationToken"),
                Map.entry("brokerClientAuthenticationParameters", "token:" + superUserToken),
                // How often the broker looks for expired credentials on open connections (default 60 s).
                Map.entry("authenticationRefreshCheckSeconds", "1"),
                Map.entry("brokerServicePortTls", "0"),
                Map.entry("tlsCertificateFilePath", certificates.brokerCert().toString()),
                Map.entry("tlsKeyFilePath", certificates.brokerKey().toString()),
                Map.entry("tlsTrustCertsFilePath", certificates.ca().toString()),
                Map.entry("tlsRequireTrustedClientCertOnConnect", "true")));
        System.out.printf(
                "[AuthenticationIT] certificates made in %.1f s; broker with authentication and TLS started"
                        + " in %.1f s%n",
                certificatesMillis / 1000.0, broker.startMillis() / 1000.0);
        admin = PulsarAdmin.builder()
                .serviceHttpUrl(broker.endpoints().adminUrl())
                .authentication(AuthenticationFactory.token(superUserToken))
                .build();
        producers = PulsarClient.builder()
                .serviceUrl(broker.endpoints().serviceUrl())
                .authentication(AuthenticationFactory.token(superUserToken))
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

    /** A handler that appends each value to the file in config "out". */
    private static Path recorderJar(String name) {
        Path jar = folder.resolve(name + ".jar");
        TestJar.at(jar)
                .source("test." + name, """
                        package test;
                        import dev.settle.sdk.*;
                        import java.nio.file.*;
                        public class %s implements Handler<String> {
                            private Path out;
                            @Override public void open(HandlerContext context) {
                                out = Path.of(context.config().get("out"));
                            }
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                Files.writeString(out, delivery.value() + "\\n", StandardOpenOption.CREATE,
                                        StandardOpenOption.APPEND);
                                return Outcome.ack();
                            }
                        }
                        """.formatted(name))
                .services("test." + name)
                .build();
        return jar;
    }

    private static Path manifest(String name, String pulsar, String topic, Path out) throws Exception {
        return Files.writeString(
                folder.resolve(name + ".yaml"),
                "pulsar:\n" + pulsar.indent(2) + """
                http:
                  port: 0
                subscriptions:
                  - name: %s
                    topics: [%s]
                    jar: %s
                    config:
                      out: %s
                """.formatted(name, topic, recorderJar(name), out));
    }

    private static void send(String topic, String value) throws PulsarClientException {
        try (Producer<String> producer =
                producers.newProducer(Schema.STRING).topic(topic).create()) {
            producer.send(value);
        }
    }

    private static List<String> lines(Path out) throws Exception {
        return Files.exists(out) ? Files.readAllLines(out) : List.of();
    }

    @Test
    void aTokenFileReplacedBeforeTheOldTokenExpiresKeepsTheRuntimeConsumingAcrossATopicUnload() throws Exception {
        String topic = "persistent://public/default/rotated-token-" + System.nanoTime();
        Path tokenFile = folder.resolve("orders.token");
        Instant firstExpires = Instant.now().plusSeconds(10);
        Files.writeString(tokenFile, tokens.token("orders-runtime", Optional.of(firstExpires)));
        Path out = folder.resolve("rotated.out");
        admin.topics().createNonPartitionedTopic(topic);
        Path file = manifest(
                "Rotated",
                "serviceUrl: " + broker.endpoints().serviceUrl() + "\nauthentication:\n" + "  token: {file: "
                        + tokenFile + "}",
                topic,
                out);

        try (Deployment deployment = Preflight.check(file, Map.of());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            send(topic, "before");
            await().atMost(Duration.ofSeconds(30)).until(() -> lines(out).contains("before"));

            // As a secret rotation does it: a new file, moved into place over the old one.
            Path next = folder.resolve("orders.token.next");
            Files.writeString(next, tokens.token("orders-runtime", Optional.empty()));
            Files.move(next, tokenFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            // The first token is now expired: the broker's refresh check (every second) has challenged the open
            // connection, and only the new token can answer it.
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> Instant.now().isAfter(firstExpires.plusSeconds(3)));

            long unloaded = System.nanoTime();
            admin.topics().unload(topic);
            send(topic, "after");
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> lines(out).contains("after"));
            System.out.printf(
                    "[AuthenticationIT] after the rotation: unload to message handled in %d ms%n",
                    (System.nanoTime() - unloaded) / 1_000_000);

            assertThat(lines(out)).containsExactly("before", "after");
            List<? extends ConsumerStats> consumers = admin.topics()
                    .getStats(topic)
                    .getSubscriptions()
                    .get("Rotated")
                    .getConsumers();
            assertThat(consumers).hasSize(1);
            assertThat(consumers.get(0).getAppId()).isEqualTo("orders-runtime");
        }
    }

    @Test
    void aConsumerAuthenticatedByItsClientCertificateReceivesMessages() throws Exception {
        String serviceUrlTls = broker.serviceUrlTls().orElseThrow();
        String topic = "persistent://public/default/client-certificate-" + System.nanoTime();
        Path out = folder.resolve("certificate.out");
        admin.topics().createNonPartitionedTopic(topic);
        Path file = manifest(
                "Certified",
                "serviceUrl: " + serviceUrlTls + "\nauthentication:\n  tls:\n"
                        + "    certFile: " + certificates.clientCert() + "\n    keyFile: " + certificates.clientKey()
                        + "\ntls:\n  trustCertsFile: " + certificates.ca(),
                topic,
                out);

        try (Deployment deployment = Preflight.check(file, Map.of());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            send(topic, "certified");
            await().atMost(Duration.ofSeconds(30)).until(() -> lines(out).contains("certified"));

            List<? extends ConsumerStats> consumers = admin.topics()
                    .getStats(topic)
                    .getSubscriptions()
                    .get("Certified")
                    .getConsumers();
            assertThat(consumers).hasSize(1);
            // The broker took the role from the certificate's common name.
            assertThat(consumers.get(0).getAppId()).isEqualTo("orders-mtls");
        }
    }

    @Test
    void theBrokerRefusesAClientWithoutACertificateOnItsTlsPort() throws Exception {
        try (PulsarClient anonymous = PulsarClient.builder()
                .serviceUrl(broker.serviceUrlTls().orElseThrow())
                .tlsTrustCertsFilePath(certificates.ca().toString())
                .operationTimeout(5, TimeUnit.SECONDS)
                .build()) {
            assertThatThrownBy(() -> anonymous
                            .newConsumer(Schema.STRING)
                            .topic("persistent://public/default/no-certificate")
                            .subscriptionName("anonymous")
                            .subscribe())
                    .isInstanceOf(PulsarClientException.class);
        }
    }
}
