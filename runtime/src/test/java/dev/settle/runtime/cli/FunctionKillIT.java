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
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Publish-then-ack survives SIGKILL: a runtime killed while a function's outputs are in flight never leaves an
 * acknowledged input without its output. Outputs may be duplicated (an output stored, its input's ack not yet sent);
 * the test counts them. The runtime that works off what the kill left runs in the test's JVM ({@link InThisJvm}).
 */
// Minutes of child processes: run with -Preliability (.ci/run), not in a plain ./mvnw verify.
@Tag("reliability")
class FunctionKillIT {
    private static final int MESSAGES = 1_000;

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void aSigkillBetweenPublishAndAckNeverLeavesAnAcknowledgedInputWithoutItsOutput() throws Exception {
        // 50 ms a call, 16 at once: about 3 s of work, so the kill finds inputs in flight however slowly the admin
        // API answers the polls on a loaded machine.
        TaggerJar.build(folder.resolve("tagger.jar"), "com.example.tag.Tagger", 50);
        String input = "persistent://public/default/kill-in-" + System.nanoTime();
        String output = input + "-out";
        // Outputs wait in their batch longer than acknowledgements wait in their group (100 ms): an input
        // acknowledged before its output is stored would then have its ack sent and its output lost by the kill.
        Path manifest = folder.resolve("settle.yaml");
        pulsar.manifest(manifest, """
                subscriptions:
                  - name: tagger
                    topics: [%s]
                    function: com.example.tag.Tagger
                    jar: tagger.jar
                    output:
                      topic: %s
                      batchingMaxDelay: 500ms
                    concurrency: 16
                """.formatted(input, output));
        // The subscription exists before the inputs, so none is skipped; the output is read from its start.
        pulsar.backlog(input, "tagger", MESSAGES, i -> String.format("m-%04d", i));

        SettleProcess first = pulsar.closeAfterTest(SettleProcess.run(manifest, "settle killed"));
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                // Some inputs acknowledged already (acks wait for their outputs' 500 ms batches), others not.
                .until(() -> outputCount(output) >= MESSAGES / 4 && backlog(input) < MESSAGES);
        first.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        long backlogAfterKill = backlog(input);
        long outputsAfterKill = outputCount(output);

        Settle second = InThisJvm.start(pulsar, manifest);
        await().atMost(Duration.ofSeconds(90)).until(() -> backlog(input) == 0);
        second.close();

        Map<String, Integer> copies = pulsar.copies(output, MESSAGES);
        int duplicated = duplicates(copies);
        System.out.printf(
                "SIGKILL with %d of %d inputs unacknowledged and %d outputs stored: after the restart %d distinct"
                        + " outputs, %d duplicated%n",
                backlogAfterKill, MESSAGES, outputsAfterKill, copies.size(), duplicated);

        // The kill came mid-run ...
        assertThat(backlogAfterKill).isBetween(1L, (long) MESSAGES - 1);
        // ... and every input, each acknowledged by now, has its output: none was acknowledged before it.
        assertThat(copies).hasSize(MESSAGES);
        for (int i = 0; i < MESSAGES; i++) {
            assertThat(copies).containsKey(String.format("tagged m-%04d", i));
        }
        assertThat(duplicated).isLessThanOrEqualTo((int) backlogAfterKill);
    }

    /**
     * A counter in the function's state ({@code state:}) after a SIGKILL at at-least-once: a change is stored before
     * its input is acknowledged, so the counter never shows less than the inputs acknowledged; the inputs that had
     * counted and were not yet acknowledged at the kill come back and count again, so after the restart it shows the
     * inputs plus at most the inputs unacknowledged at the kill (docs/functions.md, "State").
     */
    @Test
    void aCounterAfterASigkillShowsEveryInputPlusAtMostThoseUnacknowledgedAtTheKill() throws Exception {
        int inputs = 10_000;
        TestJar.at(folder.resolve("counter.jar"))
                .source("com.example.count.Counter", """
                        package com.example.count;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Counter implements Function<String, Void> {
                            @Override public Void process(String input, Context context) throws Exception {
                                // Deliberately slow: the kill must find inputs in flight.
                                %s
                                context.incrCounter("inputs", 1);
                                return null;
                            }
                        }
                        """.formatted(HandlerWork.pause(1)))
                .build();
        String input = "persistent://public/default/count-in-" + System.nanoTime();
        String state = input + "-state";
        Path manifest = folder.resolve("counter.yaml");
        pulsar.manifest(manifest, """
                subscriptions:
                  - name: tagger
                    topics: [%s]
                    function: com.example.count.Counter
                    jar: counter.jar
                    state: %s
                """.formatted(input, state));
        pulsar.backlog(input, "tagger", inputs, i -> "i-" + i);

        SettleProcess first = pulsar.closeAfterTest(SettleProcess.run(manifest, "settle counting"));
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> backlog(input) <= inputs * 3 / 4);
        first.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        long unacknowledgedAtKill = backlog(input);
        long counterAtKill = counter(state);

        Settle second = InThisJvm.start(pulsar, manifest);
        await().atMost(Duration.ofSeconds(120)).until(() -> backlog(input) == 0);
        second.close();
        long counter = counter(state);
        System.out.printf(
                "SIGKILL of a counter at at-least-once: %d inputs, %d unacknowledged at the kill, counter %d at the"
                        + " kill and %d once all are acknowledged (%d counted twice)%n",
                inputs, unacknowledgedAtKill, counterAtKill, counter, counter - inputs);

        assertThat(unacknowledgedAtKill).isBetween(1L, (long) inputs - 1);
        // Never less than the inputs acknowledged: every acknowledged input's change was stored first.
        assertThat(counterAtKill).isGreaterThanOrEqualTo(inputs - unacknowledgedAtKill);
        assertThat(counter).isBetween((long) inputs, inputs + unacknowledgedAtKill);
    }

    /** The counter "inputs" as the state topic holds it: its last value, read to the end of the topic. */
    private long counter(String topic) throws Exception {
        long counter = 0;
        try (var reader = pulsar.client()
                .newReader(Schema.BYTES)
                .topic(topic)
                .startMessageId(org.apache.pulsar.client.api.MessageId.earliest)
                .create()) {
            while (reader.hasMessageAvailable()) {
                Message<byte[]> change = reader.readNext(10, TimeUnit.SECONDS);
                if (change != null && "inputs".equals(change.getKey())) {
                    counter = java.nio.ByteBuffer.wrap(change.getValue()).getLong();
                }
            }
        }
        return counter;
    }

    private long backlog(String topic) throws Exception {
        return pulsar.backlog(topic, "tagger");
    }

    private long outputCount(String topic) {
        try {
            return pulsar.admin().topics().getStats(topic).getMsgInCounter();
        } catch (Exception notYetThere) {
            return 0;
        }
    }
}
