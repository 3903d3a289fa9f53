package dev.settle.reliability;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.SubscriptionStats;

/** Sequence-numbered messages, the manifests that run the recording handler on them, and the broker's view. */
final class Workload {
    static final int KEYS = 50;
    static final Path HANDLER_JAR = Path.of(
                    System.getProperty("settle.reliability.handlerJar", "target/settle-reliability-handler.jar"))
            .toAbsolutePath();

    private Workload() {}

    static String topic(String name) {
        return "persistent://public/default/reliability-" + name + "-" + System.nanoTime();
    }

    static String key(long sequence) {
        return key(sequence, KEYS);
    }

    /** Sequence {@code sequence}'s key among {@code keys} keys: {@code k<sequence % keys>}. */
    static String key(long sequence, int keys) {
        return "k" + (sequence % keys);
    }

    /**
     * Publishes sequences {@code [from, to)}, one message each (unbatched: a batch would come back whole on a retry),
     * keyed over {@link #KEYS} keys; returns once the broker has stored them all.
     */
    static void publish(PulsarClient client, String topic, long from, long to) throws Exception {
        publish(client, topic, from, to, KEYS);
    }

    /** As {@link #publish(PulsarClient, String, long, long)}, keyed over {@code keys} keys. */
    static void publish(PulsarClient client, String topic, long from, long to, int keys) throws Exception {
        try (Producer<String> producer = client.newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .blockIfQueueFull(true)
                .maxPendingMessages(2_000)
                .create()) {
            List<CompletableFuture<?>> sent = new ArrayList<>();
            for (long sequence = from; sequence < to; sequence++) {
                sent.add(producer.newMessage()
                        .key(key(sequence, keys))
                        .value(Long.toString(sequence))
                        .sendAsync());
            }
            CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).join();
        }
    }

    /**
     * One subscription of a manifest, running the recording handler in {@code mode}; {@code settings} are more
     * subscription keys ({@code handlerTimeout: 3s}), {@code config} more handler settings.
     */
    record Subscription(
            String name,
            String topic,
            String type,
            int concurrency,
            Path record,
            String mode,
            Map<String, String> settings,
            Map<String, String> config) {
        Subscription(String name, String topic, String type, int concurrency, Path record, String mode) {
            this(name, topic, type, concurrency, record, mode, Map.of(), Map.of());
        }

        String yaml() {
            StringBuilder yaml = new StringBuilder();
            yaml.append("  - name: ").append(name).append('\n');
            yaml.append("    topics: [").append(topic).append("]\n");
            yaml.append("    type: ").append(type).append('\n');
            yaml.append("    jar: ").append(HANDLER_JAR).append('\n');
            yaml.append("    concurrency: ").append(concurrency).append('\n');
            settings.forEach((key, value) ->
                    yaml.append("    ").append(key).append(": ").append(value).append('\n'));
            yaml.append("    config:\n");
            yaml.append("      record: ").append(record).append('\n');
            yaml.append("      mode: ").append(mode).append('\n');
            config.forEach((key, value) ->
                    yaml.append("      ").append(key).append(": ").append(value).append('\n'));
            return yaml.toString();
        }
    }

    /** Writes a manifest for {@code serviceUrl} and HTTP port {@code http}; {@code top} adds top-level sections. */
    static Path manifest(Path file, String serviceUrl, int http, String top, List<Subscription> subscriptions)
            throws IOException {
        StringBuilder yaml = new StringBuilder();
        yaml.append("pulsar:\n  serviceUrl: ")
                .append(serviceUrl)
                .append("\nhttp:\n  port: ")
                .append(http)
                .append("\n  bindAddress: 127.0.0.1\n")
                .append(top)
                .append("subscriptions:\n");
        subscriptions.forEach(subscription -> yaml.append(subscription.yaml()));
        return Files.writeString(file, yaml);
    }

    /** The broker's figures for one subscription. */
    static SubscriptionStats stats(PulsarAdmin admin, String topic, String subscription) throws PulsarAdminException {
        return admin.topics().getStats(topic).getSubscriptions().get(subscription);
    }
}
