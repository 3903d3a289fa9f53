package dev.settle.runtime;

import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A client and an admin on the shared test broker for one test, and the runtimes it started there (closed at its
 * end, before the client): what the integration tests that run Settle against a broker share. Register it on an
 * instance field with {@code @RegisterExtension}; it is connected before each test's {@code @BeforeEach} methods.
 */
public final class PulsarSession implements BeforeEachCallback, AfterEachCallback {
    private PulsarEndpoints endpoints;
    private PulsarClient client;
    private PulsarAdmin admin;
    private final List<AutoCloseable> started = new ArrayList<>();

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        endpoints = PulsarBroker.endpoints(context);
        client = PulsarClient.builder().serviceUrl(endpoints.serviceUrl()).build();
        admin = PulsarAdmin.builder().serviceHttpUrl(endpoints.adminUrl()).build();
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        // Last started, first closed: a deployment outlives the runtime started from it.
        for (int i = started.size() - 1; i >= 0; i--) {
            started.get(i).close();
        }
        admin.close();
        client.close();
    }

    public PulsarEndpoints endpoints() {
        return endpoints;
    }

    public PulsarClient client() {
        return client;
    }

    public PulsarAdmin admin() {
        return admin;
    }

    /**
     * Writes {@code file}, a manifest on this broker with its HTTP server on a free local port, and returns it;
     * {@code rest} is the YAML that follows those two keys ({@code subscriptions:} and any other).
     */
    public Path manifest(Path file, String rest) throws IOException {
        Files.writeString(file, manifestText(endpoints.serviceUrl(), 0, rest));
        return file;
    }

    /**
     * A manifest on the broker at {@code serviceUrl} with its HTTP server on 127.0.0.1 at {@code httpPort} (0: a free
     * port); {@code rest} is the YAML that follows those two keys ({@code subscriptions:} and any other).
     */
    public static String manifestText(String serviceUrl, int httpPort, String rest) {
        return """
                pulsar:
                  serviceUrl: %s
                http:
                  port: %d
                  bindAddress: 127.0.0.1
                """.formatted(serviceUrl, httpPort) + rest;
    }

    /** {@code running} (a runtime, a process, a deployment), to be closed when the test ends. */
    public <T extends AutoCloseable> T closeAfterTest(T running) {
        started.add(running);
        return running;
    }

    /**
     * Creates {@code topic} with {@code subscription} from its earliest message, so none is skipped, then publishes
     * {@code count} unbatched messages, {@code value} giving the {@code i}th, and waits until all are stored. Unbatched:
     * a backlog counts entries, and the tests time their steps by it.
     */
    public void backlog(String topic, String subscription, int count, IntFunction<String> value) throws Exception {
        admin.topics().createNonPartitionedTopic(topic);
        admin.topics().createSubscription(topic, subscription, MessageId.earliest);
        publish(topic, count, value);
    }

    /** Publishes {@code count} unbatched messages to {@code topic}, {@code value} giving the {@code i}th; waits until all are stored. */
    public void publish(String topic, int count, IntFunction<String> value) throws Exception {
        try (Producer<String> producer = client.newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            List<CompletableFuture<?>> sends = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sends.add(producer.sendAsync(value.apply(i)));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        }
    }

    /** The messages of {@code topic} that {@code subscription} has not acknowledged yet. */
    public long backlog(String topic, String subscription) throws Exception {
        return admin.topics()
                .getStats(topic)
                .getSubscriptions()
                .get(subscription)
                .getMsgBacklog();
    }

    /**
     * Every value of {@code topic} with how often it was read, by a fresh consumer from the start: until
     * {@code expected} distinct values are in (a transaction a kill left open holds back every later message of the
     * topic from readers until the coordinator aborts it at its timeout), then until nothing more comes for 5 s.
     */
    public Map<String, Integer> copies(String topic, int expected) throws Exception {
        Map<String, Integer> copies = new HashMap<>();
        try (Consumer<String> reader = client.newConsumer(Schema.STRING)
                .topic(topic)
                .subscriptionName("reader-" + System.nanoTime())
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .receiverQueueSize(1000)
                .subscribe()) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (copies.size() < expected && System.nanoTime() < deadline) {
                Message<String> message = reader.receive(1, TimeUnit.SECONDS);
                if (message != null) {
                    copies.merge(message.getValue(), 1, Integer::sum);
                }
            }
            for (Message<String> message = reader.receive(5, TimeUnit.SECONDS);
                    message != null;
                    message = reader.receive(5, TimeUnit.SECONDS)) {
                copies.merge(message.getValue(), 1, Integer::sum);
            }
        }
        return copies;
    }

    /** How many reads of {@code copies} were of a value read before. */
    public static int duplicates(Map<String, Integer> copies) {
        return copies.values().stream().mapToInt(n -> n - 1).sum();
    }
}
