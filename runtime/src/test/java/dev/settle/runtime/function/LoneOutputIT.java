package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lone input's output is sent as soon as the subscription has nothing more to hand out, not at the end of the
 * output producer's batch delay: with a delay of 30 s, each of five inputs sent one at a time comes out within
 * seconds (docs/functions.md, "Outputs are pipelined").
 */
class LoneOutputIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private static final Duration BATCH_DELAY = Duration.ofSeconds(30);

    @TempDir
    Path folder;

    @Test
    void aLoneOutputIsSentAtOnceNotAtTheEndOfTheBatchDelay() throws Exception {
        FunctionJars.identity(folder);
        String in = pulsar.topic("lone-in");
        String out = pulsar.topic("lone-out");
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        admin.topics().createNonPartitionedTopic(in);
        admin.topics().createSubscription(in, "identity", MessageId.earliest);
        Path manifest = FunctionTopics.manifest(
                folder, "identity.yaml", pulsar.endpoints(), "identity", in, "identity.jar", """
                function: com.example.identity.Identity
                output:
                  topic: %s
                  batchingMaxDelay: %ds
                """.formatted(
                                out, BATCH_DELAY.toSeconds()));
        try (Deployment deployment = Preflight.check(manifest, Map.of());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5));
                Consumer<String> outputs = client.newConsumer(Schema.STRING)
                        .topic(out)
                        .subscriptionName("check")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .subscribe();
                Producer<String> inputs = client.newProducer(Schema.STRING)
                        .topic(in)
                        .enableBatching(false)
                        .create()) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200);
            for (int i = 0; i < 5; i++) {
                long sent = System.nanoTime();
                inputs.send("m" + i);
                // Generous for a loaded machine, and far below the batch delay that would hold it otherwise.
                Message<String> output = outputs.receive(10, TimeUnit.SECONDS);
                assertThat(output)
                        .as("the output of m%d within 10 s, the batch delay being %s", i, BATCH_DELAY)
                        .isNotNull();
                assertThat(output.getValue()).isEqualTo("m" + i);
                System.out.printf("m%d: output after %.1f ms%n", i, (System.nanoTime() - sent) / 1e6);
                outputs.acknowledge(output);
            }
        }
    }
}
