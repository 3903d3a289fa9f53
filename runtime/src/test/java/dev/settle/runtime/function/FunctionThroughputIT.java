package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small side-by-side measurement on one broker, in one run: a no-op Settle handler, a no-op Pulsar Function
 * (returns null: acknowledged, nothing published), and an identity function whose every input is acknowledged once
 * its output is durable (outputs pipelined). It prints messages per second; it asserts only that every message was settled, never a timing
 * (the broker shares this JVM and the machine's two cores: read the ratios).
 */
class FunctionThroughputIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private static final int MESSAGES = 10_000;
    private static final int ROUNDS = 2;

    @TempDir
    Path folder;

    @Test
    void aNoOpFunctionBesideANoOpHandler() throws Exception {
        TestJar.at(folder.resolve("noop.jar"))
                .source("bench.NoOpHandler", """
                        package bench;
                        import dev.settle.sdk.*;
                        public class NoOpHandler implements Handler<String> {
                            @Override public Outcome handle(Delivery<String> delivery) { return Outcome.ack(); }
                        }
                        """)
                .source("bench.NoOpFunction", """
                        package bench;
                        import org.apache.pulsar.functions.api.*;
                        public class NoOpFunction implements Function<String, Void> {
                            @Override public Void process(String input, Context context) { return null; }
                        }
                        """)
                .source("bench.IdentityFunction", """
                        package bench;
                        import org.apache.pulsar.functions.api.*;
                        public class IdentityFunction implements Function<String, String> {
                            @Override public String process(String input, Context context) { return input; }
                        }
                        """)
                .services("bench.NoOpHandler")
                .build();
        Map<String, String> kinds = new LinkedHashMap<>();
        kinds.put("no-op handler", "handler: bench.NoOpHandler");
        kinds.put("no-op function", "function: bench.NoOpFunction");
        kinds.put("identity function, outputs pipelined", "function: bench.IdentityFunction\noutput: %s-out");
        kinds.put(
                "identity function, concurrency 8", "function: bench.IdentityFunction\noutput: %s-out\nconcurrency: 8");
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        kinds.keySet().forEach(kind -> rates.put(kind, new ArrayList<>()));
        rates.put("for reference: producer send(), one at a time", new ArrayList<>());

        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        // A warm-up round of each, not reported: the broker's first dispatches are several times slower.
        for (int round = 0; round <= ROUNDS; round++) {
            List<String> order = new ArrayList<>(kinds.keySet());
            if (round % 2 == 0) {
                java.util.Collections.reverse(order);
            }
            for (String kind : order) {
                int count = MESSAGES;
                double rate = measure(client, admin, kinds.get(kind), round == 0 ? count / 4 : count);
                if (round > 0) {
                    rates.get(kind).add(rate);
                }
            }
            double sequential = sequentialSends(client, MESSAGES / 10);
            if (round > 0) {
                rates.get("for reference: producer send(), one at a time").add(sequential);
            }
        }
        System.out.printf("%d messages of 100 bytes, batched producer, Shared, one broker in this JVM:%n", MESSAGES);
        rates.forEach((kind, measured) -> System.out.printf(
                "  %-46s %s msg/s%n",
                kind, measured.stream().map(r -> String.format("%,.0f", r)).toList()));
        rates.values()
                .forEach(measured -> assertThat(measured)
                        .hasSize(ROUNDS)
                        .allSatisfy(rate -> assertThat(rate).isPositive()));
    }

    /** What one send at a time, each waiting until stored, achieves: the bound of an awaited output at concurrency 1. */
    private double sequentialSends(PulsarClient client, int messages) throws Exception {
        String topic = pulsar.topic("sequential");
        try (Producer<String> producer = client.newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            producer.send("warm");
            long started = System.nanoTime();
            for (int i = 0; i < messages; i++) {
                producer.send("m" + i);
            }
            return messages / ((System.nanoTime() - started) / 1e9);
        }
    }

    private double measure(PulsarClient client, PulsarAdmin admin, String code, int messages) throws Exception {
        String topic = pulsar.topic("throughput");
        byte[] filler = new byte[100 - 6];
        java.util.Arrays.fill(filler, (byte) 'x');
        String padding = new String(filler, java.nio.charset.StandardCharsets.US_ASCII);
        FunctionTopics.backlog(
                client,
                admin,
                topic,
                "bench",
                messages,
                (i, message) -> message.value(String.format("%06d", i) + padding));
        Path manifest = FunctionTopics.manifest(
                folder,
                "bench-" + System.nanoTime() + ".yaml",
                pulsar.endpoints(),
                "bench",
                topic,
                "noop.jar",
                code.formatted(topic));
        try (Deployment deployment = Preflight.check(manifest, Map.of());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            String acks = "settle_outcomes_total{subscription=\"bench\",outcome=\"ack\"}";
            long first = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                Double done = Exposition.of(settle.metrics().registry()).value(acks);
                double count = done == null ? 0 : done;
                if (first == 0 && count > 0) {
                    first = System.nanoTime();
                }
                if (count >= messages) {
                    return messages / ((System.nanoTime() - first) / 1e9);
                }
                // 10 ms keeps the measured time within 1% of a drain of seconds.
                Waits.pause(Duration.ofMillis(10), "a sampling interval of the drain");
            }
            throw new AssertionError("not all " + messages + " messages were settled within 120 s by " + code);
        }
    }
}
