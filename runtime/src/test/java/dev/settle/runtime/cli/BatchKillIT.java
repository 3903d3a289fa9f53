package dev.settle.runtime.cli;

import static dev.settle.testbroker.PulsarFixture.duplicates;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.InThisJvm;
import dev.settle.runtime.Settle;
import dev.settle.runtime.isolation.HandlerWork;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A batch handler at exactly-once (issue 47) under SIGKILL: {@code settle run} killed three times at seeded random
 * moments while a batch handler that publishes for each delivery (and retries every seventh on its first attempt, so
 * that held outputs are dropped too) works through sequence-numbered inputs in batches of up to 50, each call taking
 * 20 ms so that most kills land inside a call or between a call and its commit. After a last run (a runtime in the
 * test's JVM, {@link InThisJvm}) every input's output
 * is read exactly once and the backlog is 0; the same run at at-least-once reads duplicates, so the assertion can fail.
 * {@code -Dsettle.reliability.seed=<n>} repeats a run's kill moments.
 */
// Minutes of child processes: run with -Preliability (.ci/run), not in a plain ./mvnw verify.
@Tag("reliability")
class BatchKillIT {
    static final int MESSAGES = Integer.getInteger("settle.batch.kill.messages", 6_000);
    static final int KILLS = 3;

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void threeSigkillsMidBatchNeitherLoseNorDoubleAnOutputAtExactlyOnce() throws Exception {
        Map<String, Integer> outputs = killThreeTimes("exactly-once");

        assertThat(outputs).hasSize(MESSAGES);
        assertThat(outputs.values().stream().filter(n -> n != 1))
                .as("outputs read more than once")
                .isEmpty();
    }

    /**
     * The same kills at at-least-once read outputs twice (those of the retried deliveries' first attempts, and of
     * inputs a kill left unacknowledged), so the assertion above can fail.
     */
    @Test
    void atLeastOnceDoublesOutputsAcrossTheSameKills() throws Exception {
        Map<String, Integer> outputs = killThreeTimes("at-least-once");

        assertThat(outputs).hasSize(MESSAGES);
        assertThat(duplicates(outputs)).isPositive();
    }

    /** Works {@link #MESSAGES} inputs off at {@code guarantee} through three kills and a last run; the outputs read. */
    private Map<String, Integer> killThreeTimes(String guarantee) throws Exception {
        TestJar.at(folder.resolve("bulk.jar"))
                .source("com.example.bulk.Bulk", """
                        package com.example.bulk;
                        import dev.settle.sdk.*;
                        import java.util.List;
                        public class Bulk implements BatchHandler<String> {
                            private Publisher<String> out;
                            @Override public void open(HandlerContext context) {
                                out = context.publisher(context.config().get("out"), String.class);
                            }
                            @Override public BatchResult handle(List<Delivery<String>> batch) throws Exception {
                                BatchResult result = BatchResult.create();
                                for (Delivery<String> delivery : batch) {
                                    out.publish(delivery, "seen " + delivery.value());
                                    int n = Integer.parseInt(delivery.value().substring(2));
                                    if (n % 7 == 0 && delivery.attempt() == 1) {
                                        result.retry(delivery);
                                    } else {
                                        result.ack(delivery);
                                    }
                                }
                                // A bulk call that takes a while: a kill often lands inside one.
                                PAUSE
                                return result;
                            }
                        }
                        """.replace("PAUSE", HandlerWork.pause(20)))
                .resource("META-INF/services/dev.settle.sdk.BatchHandler", "com.example.bulk.Bulk\n")
                .build();
        long seed = Long.getLong("settle.reliability.seed", System.currentTimeMillis());
        Random random = new Random(seed);
        double[] killAt = new double[KILLS];
        for (int i = 0; i < KILLS; i++) {
            // Within the first 65 %: each later run still has inputs left to be killed amid.
            killAt[i] = 0.05 + 0.6 * random.nextDouble();
        }
        Arrays.sort(killAt);
        System.out.printf("batch kill test, %s: %d inputs, %d SIGKILLs, seed %d%n", guarantee, MESSAGES, KILLS, seed);
        String input = "persistent://public/default/batch-kill-" + System.nanoTime();
        pulsar.backlog(input, "bulk", MESSAGES, i -> String.format("m-%05d", i));
        Path manifest = pulsar.manifest(folder.resolve(guarantee + ".yaml"), """
                subscriptions:
                  - name: bulk
                    topics: [%s]
                    jar: bulk.jar
                    config: {out: %s-out}
                    concurrency: 4
                    handlerTimeout: 5s
                    guarantee: %s
                    batch: {maxMessages: 50, maxWait: 20ms}
                """.formatted(input, input, guarantee));

        for (int run = 0; run < KILLS; run++) {
            SettleProcess settle = pulsar.closeAfterTest(SettleProcess.run(manifest, guarantee + " run " + run));
            // At least 200 more inputs settled in this run, so that no kill comes before the runtime has started, and
            // 500 left for the runs after it.
            long settledBefore = MESSAGES - pulsar.backlog(input, "bulk");
            long target = Math.min(Math.max((long) (killAt[run] * MESSAGES), settledBefore + 200), MESSAGES - 500);
            await().atMost(Duration.ofMinutes(3))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> MESSAGES - pulsar.backlog(input, "bulk") >= target);
            Waits.pause(Duration.ofMillis(random.nextInt(50)), "the kill lands at a random point of a batch");
            settle.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            System.out.printf("kill %d: SIGKILL with %d inputs left%n", run + 1, pulsar.backlog(input, "bulk"));
        }
        Settle last = InThisJvm.start(pulsar, manifest);
        await().atMost(Duration.ofMinutes(5))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> pulsar.backlog(input, "bulk") == 0);
        last.close();

        Map<String, Integer> outputs = pulsar.copies(input + "-out", MESSAGES);
        System.out.printf(
                "batch kill test, %s: %d distinct outputs, %d duplicated, backlog 0%n",
                guarantee, outputs.size(), duplicates(outputs));
        return outputs;
    }
}
