package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A batch handler at {@code guarantee: exactly-once} (issue 47): what it publishes for a delivery is committed with that
 * delivery's acknowledgement, and only when its outcome is ack or drop. A delivery it retries, and a call that throws
 * (and is split by the bisection, which calls the same deliveries again), commit nothing, so a reader of the output
 * topic (read committed, as every Pulsar consumer reads) sees each input's output exactly once.
 *
 * <p>The tests run side by side: each has its own topics and runtime, and most of each is waiting.
 */
@Execution(ExecutionMode.CONCURRENT)
class BatchExactlyOnceIT {
    private static final int MESSAGES = 60;

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    /**
     * A call that publishes for each of its deliveries and then throws is split and called again: the outputs of the
     * call that threw must not be committed beside those of the call that acknowledged (without holding them, each
     * input of such a call was read twice).
     */
    @Test
    void theOutputsOfACallThatThrewAreNeverCommittedBesideThoseOfTheSplitCallsThatAcknowledged() throws Exception {
        Settle settle = run("throwing", 5, 0);

        assertThat(sample(settle, "settle_batch_splits_total{subscription=\"bulk\"}"))
                .as("calls that threw and were split")
                .isPositive();
        assertThat(metric(settle, "error")).as("no delivery failed alone").isZero();
    }

    /**
     * A delivery the handler retries after publishing commits no output, and, having sent nothing, leaves its
     * transaction to the others: none is aborted (without holding its outputs, each such transaction was aborted and
     * every delivery of it came back).
     */
    @Test
    void theOutputsOfARetriedDeliveryAreNeverSentSoItsTransactionCommitsTheOthers() throws Exception {
        Settle settle = run("retrying", 0, 3);

        assertThat(metric(settle, "retry")).as("retried deliveries").isEqualTo(MESSAGES / 3);
    }

    /**
     * Runs {@link #MESSAGES} inputs through a batch handler at exactly-once that publishes {@code out <value>} for each
     * delivery, then throws from the first call holding a value divisible by {@code throwEvery}, and retries (first
     * attempt) a value divisible by {@code retryEvery} (0: never); checks that each input's output is read once, read
     * committed, and that no transaction was aborted.
     */
    private Settle run(String name, int throwEvery, int retryEvery) throws Exception {
        Path jar = folder.resolve(name + ".jar");
        TestJar.at(jar)
                .source("test.Bulk", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.util.*;
                        import java.util.concurrent.ConcurrentHashMap;
                        public class Bulk implements BatchHandler<String> {
                            private final Set<String> threw = ConcurrentHashMap.newKeySet();
                            private Publisher<String> out;
                            private int throwEvery;
                            private int retryEvery;
                            @Override public void open(HandlerContext context) {
                                out = context.publisher(context.config().get("out"), String.class);
                                throwEvery = Integer.parseInt(context.config().get("throwEvery"));
                                retryEvery = Integer.parseInt(context.config().get("retryEvery"));
                            }
                            @Override public BatchResult handle(List<Delivery<String>> batch) {
                                BatchResult result = BatchResult.create();
                                boolean refused = false;
                                for (Delivery<String> delivery : batch) {
                                    out.publish(delivery, "out " + delivery.value());
                                    int n = Integer.parseInt(delivery.value().substring(2));
                                    refused |= throwEvery > 0 && n % throwEvery == 0 && threw.add(delivery.value());
                                    if (retryEvery > 0 && n % retryEvery == 0 && delivery.attempt() == 1) {
                                        result.retry(delivery);
                                    } else {
                                        result.ack(delivery);
                                    }
                                }
                                if (refused) {
                                    // After publishing for every delivery of the call.
                                    throw new IllegalStateException("bulk write refused");
                                }
                                return result;
                            }
                        }
                        """)
                .resource("META-INF/services/dev.settle.sdk.BatchHandler", "test.Bulk\n")
                .build();
        String input = PulsarFixture.unique("persistent://public/default/bulk-" + name);
        String output = input + "-out";
        pulsar.backlog(input, "bulk", MESSAGES, i -> String.format("m-%03d", i));
        Path manifest = pulsar.manifest(
                folder.resolve(name + ".yaml"), """
                subscriptions:
                  - name: bulk
                    topics: [%s]
                    jar: %s
                    config: {out: %s, throwEvery: "%d", retryEvery: "%d"}
                    guarantee: exactly-once
                    failureBackoff: {initial: 10ms, max: 10ms}
                    batch: {maxMessages: 20, maxWait: 200ms}
                """.formatted(input, jar, output, throwEvery, retryEvery));
        Settle settle = InThisJvm.start(pulsar, manifest);

        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> metric(settle, "ack") == MESSAGES && pulsar.backlog(input, "bulk") == 0);
        Map<String, Integer> copies = pulsar.copies(output, MESSAGES);

        assertThat(copies)
                .as("each input's output, read committed")
                .isEqualTo(IntStream.range(0, MESSAGES)
                        .mapToObj(i -> String.format("out m-%03d", i))
                        .collect(Collectors.toMap(value -> value, value -> 1)));
        assertThat(sample(settle, "settle_transactions_total{subscription=\"bulk\",outcome=\"aborted\"}"))
                .as("transactions aborted")
                .isZero();
        return settle;
    }

    private static double metric(Settle settle, String outcome) {
        return sample(settle, "settle_outcomes_total{subscription=\"bulk\",outcome=\"" + outcome + "\"}");
    }

    private static double sample(Settle settle, String sample) {
        Double value = Exposition.of(settle.metrics().registry()).value(sample);
        return value == null ? 0 : value;
    }
}
