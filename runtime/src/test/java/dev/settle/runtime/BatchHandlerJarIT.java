package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code settle run}'s path for a batch handler from its JAR (issue 47): declared, loaded, gathered, settled. */
class BatchHandlerJarIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @TempDir
    Path folder;

    @Test
    void aBatchHandlerDeclaredInItsJarIsCalledWithBatchesUpToMaxMessagesInPublishOrder() throws Exception {
        TestJar.at(folder.resolve("bulk.jar"))
                .source("test.Bulk", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.nio.file.*;
                        import java.util.*;
                        public class Bulk implements BatchHandler<String> {
                            private Path out;
                            @Override public void open(HandlerContext context) {
                                out = Path.of(context.config().get("out"));
                            }
                            @Override public BatchResult handle(List<Delivery<String>> batch) throws Exception {
                                List<String> values = new ArrayList<>();
                                for (Delivery<String> delivery : batch) {
                                    values.add(delivery.value());
                                }
                                Files.writeString(out, String.join(",", values) + "\\n",
                                        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                                return BatchResult.acknowledgeAll(batch);
                            }
                        }
                        """)
                .resource("META-INF/services/dev.settle.sdk.BatchHandler", "test.Bulk\n")
                .build();
        String topic = "persistent://public/default/bulk-" + System.nanoTime();
        List<String> values = IntStream.range(0, 25).mapToObj(i -> "v" + i).toList();
        try (Producer<String> producer =
                pulsar.client().newProducer(Schema.STRING).topic(topic).create()) {
            for (String value : values) {
                producer.send(value);
            }
        }
        Path out = folder.resolve("calls.out");
        Path file = Files.writeString(
                folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                subscriptions:
                  - name: bulk
                    topics: [%s]
                    jar: bulk.jar
                    config:
                      out: %s
                    batch:
                      maxMessages: 10
                      maxWait: 2s
                """.formatted(pulsar.endpoints().serviceUrl(), topic, out));
        Deployment deployment = Preflight.check(file, System.getenv());

        try (deployment;
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> counter(settle, "settle_outcomes", "ack") == 25);

            List<String> calls = Files.readAllLines(out);
            // Published before the start: the receiver queue hands all 25 over well within maxWait.
            assertThat(calls).hasSize(3);
            assertThat(calls.stream().map(call -> call.split(",").length)).containsExactly(10, 10, 5);
            assertThat(String.join(",", calls)).isEqualTo(String.join(",", values));
            assertThat(batchCalls(settle)).isEqualTo(3);
        }
    }

    private static double counter(Settle settle, String name, String outcome) {
        return settle.metrics().registry().scrape().stream()
                .filter(snapshot -> snapshot.getMetadata().getName().equals(name))
                .flatMap(snapshot -> ((CounterSnapshot) snapshot).getDataPoints().stream())
                .filter(point -> "bulk".equals(point.getLabels().get("subscription"))
                        && outcome.equals(point.getLabels().get("outcome")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue)
                .sum();
    }

    private static long batchCalls(Settle settle) {
        return settle.metrics().registry().scrape().stream()
                .filter(snapshot -> snapshot.getMetadata().getName().equals("settle_batch_size"))
                .flatMap(snapshot -> ((HistogramSnapshot) snapshot).getDataPoints().stream())
                .filter(point -> "bulk".equals(point.getLabels().get("subscription")))
                .mapToLong(HistogramSnapshot.HistogramDataPointSnapshot::getCount)
                .sum();
    }
}
