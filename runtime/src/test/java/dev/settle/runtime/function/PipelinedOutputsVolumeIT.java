package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * 50 000 inputs through an identity function at the defaults (outputs pipelined, batched): every input's output is
 * stored once, plus only the copies a redelivery explains, and in input order per key; and 10 000 at exactly-once.
 */
class PipelinedOutputsVolumeIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private static final int INPUTS = 50_000;
    private static final int KEYS = 100;

    @TempDir
    Path folder;

    @Test
    void fiftyThousandInputsGiveEveryOutputOnceInOrderPerKey() throws Exception {
        Drained run = drain(INPUTS, "");

        // A copy is stored twice only when its input was handled twice; a redelivery is also the only way a key's
        // outputs can leave input order (docs/functions.md, "Order").
        assertThat((double) run.duplicates()).isLessThanOrEqualTo(run.redelivered());
        if (run.redelivered() == 0) {
            assertThat(run.outOfOrder()).isZero();
        }
    }

    /**
     * The same at exactly-once with its default commit batching: deliveries of many keys share each transaction, and
     * each output is still read exactly once, in input order per key.
     */
    @Test
    void atExactlyOnceWithCommitBatchingEveryOutputIsReadOnceInOrderPerKey() throws Exception {
        Drained run = drain(INPUTS / 5, "guarantee: exactly-once\n");

        assertThat(run.duplicates()).isZero();
        if (run.redelivered() == 0) {
            assertThat(run.outOfOrder()).isZero();
        }
        assertThat(run.transactions()).as("transactions committed").isBetween(1.0, INPUTS / 5 / 2.0);
    }

    private record Drained(int duplicates, double redelivered, int outOfOrder, double transactions) {}

    /**
     * Drains {@code inputs} keyed inputs through the identity function with {@code settings} added to its manifest
     * entry; checks every input has an output and returns what else was seen.
     */
    private Drained drain(int inputs, String settings) throws Exception {
        FunctionJars.identity(folder);
        String in = pulsar.topic("volume-in");
        String out = pulsar.topic("volume-out");
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        admin.topics().createNonPartitionedTopic(out);
        admin.topics().createSubscription(out, "check", MessageId.earliest);
        FunctionTopics.backlog(
                client,
                admin,
                in,
                "identity",
                inputs,
                (i, message) -> message.key("k" + (i % KEYS)).value(Integer.toString(i)));
        Path manifest = FunctionTopics.manifest(
                folder,
                "identity.yaml",
                pulsar.endpoints(),
                "identity",
                in,
                "identity.jar",
                "function: com.example.identity.Identity\noutput: " + out + "\n" + settings);
        double redelivered;
        double transactions;
        try (Deployment deployment = Preflight.check(manifest, Map.of());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(10))) {
            Waits.until(
                    "the inputs drained (their backlog)",
                    Duration.ofSeconds(300),
                    () -> admin.topics()
                            .getStats(in)
                            .getSubscriptions()
                            .get("identity")
                            .getMsgBacklog(),
                    backlog -> backlog == 0);
            Exposition metrics = Exposition.of(settle.metrics().registry());
            Double handled = metrics.value("settle_deliveries_total{subscription=\"identity\"}");
            redelivered = (handled == null ? 0 : handled) - inputs;
            Double committed =
                    metrics.value("settle_transactions_total{subscription=\"identity\",outcome=\"committed\"}");
            transactions = committed == null ? 0 : committed;
        }

        Map<String, Integer> copies = new HashMap<>();
        Map<String, Integer> lastPerKey = new HashMap<>();
        int outOfOrder = 0;
        for (Message<String> message : FunctionTopics.readAll(client, out, "check")) {
            int value = Integer.parseInt(message.getValue());
            assertThat(message.getKey()).isEqualTo("k" + (value % KEYS));
            if (copies.merge(message.getValue(), 1, Integer::sum) == 1) {
                Integer last = lastPerKey.put(message.getKey(), value);
                if (last != null && last > value) {
                    outOfOrder++;
                }
            }
        }
        assertThat(copies).as("an output for every input").hasSize(inputs);
        int duplicates = copies.values().stream().mapToInt(n -> n - 1).sum();
        System.out.printf(
                "%d inputs%s: %d outputs, %d duplicates, %.0f redeliveries, %d out of order, %.0f transactions%n",
                inputs,
                settings.isEmpty() ? "" : " (" + settings.strip() + ")",
                inputs + duplicates,
                duplicates,
                redelivered,
                outOfOrder,
                transactions);
        return new Drained(duplicates, redelivered, outOfOrder, transactions);
    }
}
