package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.HandlerWork;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** /metrics, /livez and /readyz of a running Settle, with a real handler JAR and a real broker. */
class ObservabilityIT {
    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final HttpClient http = HttpClient.newHttpClient();

    /**
     * Decides by payload: ack, drop, retry-once, throw-once, poison (always retry), wait (retryAfter once), hang. Its
     * two sleeps are deliberate: a handler slow to open and one that hangs are what the health tests watch.
     */
    private void scriptedHandlerJar() {
        TestJar.at(folder.resolve("scripted.jar"))
                .source("test.Scripted", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.time.Duration;
                        public class Scripted implements Handler<String> {
                            @Override public void open(HandlerContext context) throws Exception {
                                // Deliberately slow when asked: readiness must wait for a handler still opening.
                                %s
                            }
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                boolean first = delivery.attempt() == 1;
                                switch (delivery.value()) {
                                    case "drop": return Outcome.drop();
                                    case "retry-once": return first ? Outcome.retry() : Outcome.ack();
                                    case "throw-once": if (first) throw new IllegalStateException("once"); return Outcome.ack();
                                    case "poison": return Outcome.retry();
                                    case "wait": return first ? Outcome.retryAfter(Duration.ofMillis(500)) : Outcome.ack();
                                    case "hang": if (first) deaf(6000); return Outcome.ack();
                                    default: return Outcome.ack();
                                }
                            }
                            /** Stays in the call for millis, ignoring interrupts: a handler stuck past its deadline. */
                            private static void deaf(long millis) {
                                long end = System.nanoTime() + millis * 1_000_000;
                                while (System.nanoTime() < end) {
                                    // A deliberate pause that ignores the lease's interrupt: the test's hung handler.
                                    try { Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1_000_000)); }
                                    catch (InterruptedException ignored) { }
                                }
                            }
                        }
                        """.formatted(HandlerWork.openPause()))
                .services("test.Scripted")
                .build();
    }

    private Deployment deployment(int port, String subscriptions) throws Exception {
        scriptedHandlerJar();
        Path file = folder.resolve("settle.yaml");
        Files.writeString(
                file, PulsarFixture.manifestText(pulsar.endpoints().serviceUrl(), port, """
                subscriptions:
                %s""".formatted(subscriptions)));
        return Preflight.check(file, System.getenv());
    }

    private static String subscription(String name, String topic, String extra) {
        return """
                  - name: %s
                    topics: [%s]
                    jar: scripted.jar
                %s
                """.formatted(name, topic, extra.indent(4).stripTrailing());
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private void send(String topic, List<String> values) throws Exception {
        pulsar.publish(topic, values.toArray(String[]::new));
    }

    @Test
    void metricsShowExactlyTheOutcomesOfAKnownMixPerSubscription() throws Exception {
        String orders = pulsar.topic("metrics-a");
        String audits = pulsar.topic("metrics-b");
        Deployment deployment = deployment(
                0,
                subscription("orders", orders, "maxAttempts: 3\ndeadLetterTopic: " + orders + "-dlq")
                        + subscription("audits", audits, ""));
        try (deployment;
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            send(orders, List.of("ack", "ack", "ack", "drop", "drop", "retry-once", "throw-once", "poison", "wait"));
            send(audits, List.of("ack", "ack"));
            int port = settle.httpPort();
            // 3 + 2 + 2 + 2 + 3 + 2 handler calls on orders.
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> Exposition.parse(get(port, "/metrics").body())
                                    .value("settle_deliveries_total{subscription=\"orders\"}")
                            == 14.0);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> Exposition.parse(get(port, "/metrics").body())
                                    .value("settle_outcomes_total{subscription=\"orders\",outcome=\"ack\"}")
                            == 6.0);

            Exposition metrics = Exposition.parse(get(port, "/metrics").body());
            Map<String, Double> expected = Map.of(
                    "ack",
                    6.0,
                    "drop",
                    2.0,
                    "retry",
                    4.0,
                    "error",
                    1.0,
                    "retry_after",
                    1.0,
                    "none",
                    0.0,
                    "refused",
                    0.0);
            expected.forEach((outcome, count) -> assertThat(
                            metrics.value("settle_outcomes_total{subscription=\"orders\",outcome=\"" + outcome + "\"}"))
                    .as(outcome)
                    .isEqualTo(count));
            assertThat(metrics.value("settle_dead_lettered_total{subscription=\"orders\"}"))
                    .isEqualTo(1.0);
            assertThat(metrics.value("settle_handler_duration_seconds_count{subscription=\"orders\"}"))
                    .isEqualTo(14.0);
            assertThat(metrics.value("settle_delivery_attempt_count{subscription=\"orders\"}"))
                    .isEqualTo(14.0);
            assertThat(metrics.value("settle_held_retries{subscription=\"orders\"}"))
                    .isEqualTo(0.0);
            assertThat(metrics.value("settle_in_flight{subscription=\"orders\"}"))
                    .isEqualTo(0.0);
            assertThat(metrics.value("settle_deliveries_total{subscription=\"audits\"}"))
                    .isEqualTo(2.0);
            assertThat(metrics.value("settle_outcomes_total{subscription=\"audits\",outcome=\"ack\"}"))
                    .isEqualTo(2.0);
            assertThat(metrics.value("settle_outcomes_total{subscription=\"audits\",outcome=\"retry\"}"))
                    .isEqualTo(0.0);
            assertThat(metrics.value("settle_receiver_queue_messages{subscription=\"audits\"}"))
                    .isNotNull();
            assertThat(metrics.sampleNames()).contains("jvm_memory_used_bytes");
        }
    }

    @Test
    void readyzIsUnavailableUntilTheConsumersAreConnectedThenReady() throws Exception {
        int port = SettleProcess.freePort();
        String topic = "persistent://public/default/ready-" + System.nanoTime();
        // The handler takes 2 s to open: the endpoint is up, the consumer is not yet subscribed.
        Deployment deployment = deployment(port, subscription("slow-open", topic, "config:\n  openMillis: \"2000\""));
        List<Integer> statuses = new CopyOnWriteArrayList<>();
        CompletableFuture<Settle> starting = CompletableFuture.supplyAsync(() -> {
            try {
                return Settle.start(deployment, Duration.ofSeconds(5));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        int finalPort = port;
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .ignoreExceptions()
                .until(() -> statuses.add(get(finalPort, "/readyz").statusCode()) && statuses.contains(503));
        try (deployment;
                Settle settle = starting.get()) {
            // Start returns once the handlers are open; each consumer subscribes on its own thread.
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> get(finalPort, "/readyz").statusCode() == 200);
            HttpResponse<String> ready = get(port, "/readyz");
            assertThat(ready.statusCode()).isEqualTo(200);
            assertThat(ready.body()).contains("ready");
            assertThat(get(port, "/livez").statusCode()).isEqualTo(200);
        }
        assertThat(statuses.get(0)).as("readyz while the handler opens").isEqualTo(503);
    }

    @Test
    void livezFailsNamingTheSubscriptionWhenAHandlerIgnoresTheInterruptPastItsTimeout() throws Exception {
        String topic = "persistent://public/default/hang-" + System.nanoTime();
        Deployment deployment = deployment(0, subscription("hangs", topic, "handlerTimeout: 1s"));
        try (deployment;
                Settle settle = Settle.start(deployment, Duration.ofSeconds(10))) {
            int port = settle.httpPort();
            assertThat(get(port, "/livez").statusCode()).isEqualTo(200);

            send(topic, List.of("hang"));

            await().atMost(Duration.ofSeconds(20))
                    .until(() -> get(port, "/livez").statusCode() == 503);
            HttpResponse<String> livez = get(port, "/livez");
            assertThat(livez.body()).contains("subscription 'hangs'").contains("handlerTimeout");
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> get(port, "/livez").statusCode() == 200);
        }
    }
}
