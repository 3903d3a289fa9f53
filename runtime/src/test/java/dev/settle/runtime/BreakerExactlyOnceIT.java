package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The outage circuit breaker at {@code guarantee: exactly-once} on a real broker with transactions
 * (docs/exactly-once.md, "An outage"): a function whose dependency (a file the test creates and deletes) is down for
 * about 5 s under about 30 msg/s over 12 keys, at the default backoff and {@code maxAttempts: 5}. Nothing reaches the
 * dead-letter topic, receiving pauses while the breaker is open ({@code /readyz} says so with the reason, and stays
 * 200), and once it closes every input's output is read exactly once by a read-committed consumer, the backlog 0.
 */
class BreakerExactlyOnceIT {
    private static final int MAX_ATTEMPTS = 5;
    private static final int KEYS = 12;

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void anOutageAtExactlyOnceDeadLettersNothingAndEveryOutputIsReadOnce() throws Exception {
        TestJar.at(folder.resolve("dependent.jar"))
                .source("com.example.dependent.Dependent", """
                        package com.example.dependent;
                        import java.nio.file.Files;
                        import java.nio.file.Path;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Dependent implements Function<String, String> {
                            @Override public String process(String input, Context context) throws Exception {
                                Path down = Path.of(context.getUserConfigValue("down").get().toString());
                                if (Files.exists(down)) {
                                    throw new java.net.ConnectException("the dependency of " + input + " is down");
                                }
                                return "out " + input;
                            }
                        }
                        """)
                .build();
        Path down = folder.resolve("dependency-down");
        String input = "persistent://public/default/breaker-eo-" + System.nanoTime();
        String output = input + "-out";
        String letters = input + "-dlq";
        pulsar.admin().topics().createNonPartitionedTopic(input);
        pulsar.admin().topics().createSubscription(input, "dependent", MessageId.earliest);
        Path manifest = folder.resolve("dependent.yaml");
        pulsar.manifest(manifest, """
                subscriptions:
                  - name: dependent
                    topics: [%s]
                    function: com.example.dependent.Dependent
                    jar: dependent.jar
                    output: %s
                    config: {down: "%s"}
                    guarantee: exactly-once
                    maxAttempts: %d
                    deadLetterTopic: %s
                """.formatted(input, output, down, MAX_ATTEMPTS, letters));
        Settle settle = InThisJvm.start(pulsar, manifest);
        int port = settle.httpPort();

        AtomicInteger sent = new AtomicInteger();
        ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor();
        String readyWhileOpen;
        int readyStatusWhileOpen;
        double errorsWhileOpen;
        try (Producer<String> producer = pulsar.client()
                .newProducer(Schema.STRING)
                .topic(input)
                .enableBatching(false)
                .create()) {
            sender.scheduleAtFixedRate(
                    () -> {
                        int n = sent.getAndIncrement();
                        producer.newMessage()
                                .key("k" + n % KEYS)
                                .value(String.format("m-%04d", n))
                                .sendAsync();
                    },
                    0,
                    33,
                    TimeUnit.MILLISECONDS);
            await().atMost(Duration.ofSeconds(60)).until(() -> metric(settle, "ack") >= 30);
            Files.createFile(down);
            long downAt = System.nanoTime();
            await().atMost(Duration.ofSeconds(15))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> get(port, "/readyz").body().contains("breaker open"));
            HttpResponse<String> ready = get(port, "/readyz");
            readyStatusWhileOpen = ready.statusCode();
            readyWhileOpen = ready.body();
            // Paused: while it stays open, only probes reach the handler, not the ~30 msg/s still being sent. The
            // 2 s are a span to count in, not a wait for a condition.
            double before = metric(settle, "error");
            await().pollDelay(Duration.ofSeconds(2))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> true);
            errorsWhileOpen = metric(settle, "error") - before;
            // The outage lasts about 5 s from its start, as the test's dependency says; nothing to wait for but it.
            long left = Math.max(0, Duration.ofSeconds(5).toNanos() - (System.nanoTime() - downAt));
            await().pollDelay(Duration.ofNanos(left))
                    .atMost(Duration.ofNanos(left).plusSeconds(1))
                    .until(() -> true);
            Files.delete(down);
            await().pollDelay(Duration.ofSeconds(2))
                    .atMost(Duration.ofSeconds(3))
                    .until(() -> true);
            sender.shutdown();
            assertThat(sender.awaitTermination(5, TimeUnit.SECONDS)).isTrue();
            producer.flush();
        } finally {
            sender.shutdownNow();
        }
        int total = sent.get();

        assertThat(readyStatusWhileOpen)
                .as("/readyz while open: %s", readyWhileOpen)
                .isEqualTo(200);
        assertThat(readyWhileOpen)
                .containsPattern("subscription 'dependent': breaker (open|half-open) \\(")
                .contains("receiving paused");
        assertThat(errorsWhileOpen)
                .as("failed calls in 2 s while open (probes only)")
                .isLessThan(15);

        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> metric(settle, "ack") >= total && pulsar.backlog(input, "dependent") == 0);
        assertThat(get(port, "/readyz").body()).doesNotContain("breaker");
        assertThat(Exposition.of(settle.metrics().registry())
                        .value("settle_breaker_state{subscription=\"dependent\",state=\"closed\"}"))
                .isEqualTo(1.0);

        Map<String, Integer> outputs = copies(output);
        assertThat(outputs)
                .hasSize(total)
                .allSatisfy((value, n) -> assertThat(n).as(value).isEqualTo(1));
        assertThat(copies(letters)).as("dead letters").isEmpty();
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Every value of {@code topic} with how often a fresh consumer (read-committed, as every consumer) reads it. */
    private Map<String, Integer> copies(String topic) throws Exception {
        // A reader is dispatched committed messages only up to the first of a transaction still open on the topic
        // (docs/exactly-once.md, "Limits"): wait until none is.
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> noOpenTransaction(topic));
        Map<String, Integer> copies = new TreeMap<>();
        try (Consumer<byte[]> reader = pulsar.client()
                .newConsumer(Schema.BYTES)
                .topic(topic)
                .subscriptionName("reader-" + System.nanoTime())
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            for (Message<byte[]> message = reader.receive(10, TimeUnit.SECONDS);
                    message != null;
                    message = reader.receive(3, TimeUnit.SECONDS)) {
                copies.merge(new String(message.getData(), StandardCharsets.UTF_8), 1, Integer::sum);
            }
        }
        return copies;
    }

    private boolean noOpenTransaction(String topic) throws PulsarAdminException {
        try {
            return pulsar.admin().transactions().getTransactionBufferStats(topic).ongoingTxnSize == 0;
        } catch (PulsarAdminException.NotFoundException neverWritten) {
            return true;
        }
    }

    private static double metric(Settle settle, String outcome) {
        Double value = Exposition.of(settle.metrics().registry())
                .value("settle_outcomes_total{subscription=\"dependent\",outcome=\"" + outcome + "\"}");
        return value == null ? 0 : value;
    }
}
