package dev.settle.reliability;

import static dev.settle.testbroker.SettleProcess.freePort;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime SIGKILLed five times at random moments while it works through sequence-numbered messages, started
 * again each time: no message is lost, and the duplicates (a sequence acknowledged twice) stay within what each kill
 * could leave unacknowledged on the broker. {@code -Dsettle.reliability.seed=<n>} repeats a run's kill moments.
 */
class KillIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    /**
     * 10 000: five kills land mid-run all the same. The issue asked for 20 000 ({@code
     * -Dsettle.reliability.kill.messages=20000}, the runs docs/reliability.md gives); half of that here, as the
     * suite's time asks.
     */
    static final int MESSAGES = Integer.getInteger("settle.reliability.kill.messages", 10_000);

    static final int KILLS = 5;
    static final int CONCURRENCY = 8;
    /**
     * How far back from a kill an acknowledgement may still be lost: the client sends acknowledgements in groups
     * every 100 ms, and a loaded machine runs that timer late; the rest is slack for the write reaching the broker.
     * 300 ms was too little at load 25: a Key_Shared kill 1.6 s into its run (the JVM still warming) found 886
     * duplicates against 751 acknowledgements in the 300 ms before it; the other kills of that build stayed under a
     * third of their bound.
     */
    static final Duration ACK_WINDOW = Duration.ofSeconds(1);

    @TempDir
    Path folder;

    @Test
    void aSharedSubscriptionLosesNothingAcrossFiveSigkills() throws Exception {
        killFiveTimes("Shared");
    }

    @Test
    void aKeySharedSubscriptionLosesNothingAcrossFiveSigkills() throws Exception {
        killFiveTimes("Key_Shared");
    }

    private void killFiveTimes(String type) throws Exception {
        long seed = Long.getLong("settle.reliability.seed", System.currentTimeMillis());
        System.out.printf(
                "kill test on %s: %d messages, %d SIGKILLs, seed %d (-Dsettle.reliability.seed=%d repeats it)%n",
                type, MESSAGES, KILLS, seed, seed);
        Random random = new Random(seed);
        // Kill once this share of the messages has been acknowledged, then a random few milliseconds later.
        double[] killAt = new double[KILLS];
        for (int i = 0; i < KILLS; i++) {
            killAt[i] = 0.05 + 0.8 * random.nextDouble();
        }
        Arrays.sort(killAt);
        String topic = Workload.topic("kill");
        long started = System.nanoTime();
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        Workload.publish(client, topic, 0, MESSAGES);
        Map<String, Path> files = new LinkedHashMap<>();
        List<Long> killMillis = new ArrayList<>();
        long ackedBefore = 0;
        for (int run = 0; run <= KILLS; run++) {
            String instance = "run-" + run;
            Path record = folder.resolve(instance + ".calls");
            files.put(instance, record);
            Path manifest = Workload.manifest(
                    folder.resolve(instance + ".yaml"),
                    pulsar.endpoints().serviceUrl(),
                    freePort(),
                    "",
                    List.of(new Workload.Subscription("kill", topic, type, CONCURRENCY, record, "mixed")));
            SettleProcess settle = SettleProcess.run(manifest, instance);
            if (run == KILLS) {
                try (settle) {
                    awaitEveryAck(files);
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> Workload.stats(admin, topic, "kill").getMsgBacklog() == 0);
                    settle.sigterm();
                    assertThat(settle.exitsWithin(30)).isTrue();
                    assertThat(settle.process.exitValue()).isZero();
                }
                break;
            }
            AckCounter counter = new AckCounter(record);
            long target = Math.max(200, (long) (killAt[run] * MESSAGES) - ackedBefore);
            try (settle) {
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(10))
                        .until(() -> counter.acks() >= target);
                Waits.pause(Duration.ofMillis(random.nextInt(100)), "the kill lands at a random point of the work");
                killMillis.add(System.currentTimeMillis());
                settle.sigkill();
            }
            ackedBefore += counter.acks();
            System.out.printf(
                    "kill %d: SIGKILL after %d acknowledgements in this run (%d in all)%n",
                    run + 1, counter.acks(), ackedBefore);
        }

        Calls calls = Calls.read(files);
        assertThat(calls.lost(MESSAGES)).as("sequences never acknowledged").isEmpty();
        assertThat(calls.duplicatesWithinOneInstance())
                .as("sequences one runtime acknowledged twice")
                .isZero();
        Map<String, Long> duplicates = calls.duplicatesByFirstInstance();
        for (int kill = 0; kill < KILLS; kill++) {
            String instance = "run-" + kill;
            long inWindow = calls.acksSince(instance, killMillis.get(kill) - ACK_WINDOW.toMillis());
            long bound = CONCURRENCY + inWindow;
            long found = duplicates.getOrDefault(instance, 0L);
            System.out.printf(
                    "kill %d (%s): %d duplicates; bound %d (%d calls in flight + %d acknowledgements in the %d ms"
                            + " before the kill)%n",
                    kill + 1, type, found, bound, CONCURRENCY, inWindow, ACK_WINDOW.toMillis());
            assertThat(found).as("duplicates after kill %d", kill + 1).isLessThanOrEqualTo(bound);
        }
        System.out.printf(
                "kill test on %s: 0 lost of %d, %d duplicates in all (%s), %d calls, %.1f s%n",
                type,
                MESSAGES,
                calls.duplicates(),
                duplicates.values(),
                calls.all().size(),
                (System.nanoTime() - started) / 1e9);
    }

    /** Waits until every sequence has an acknowledgement recorded, reading the files once a second. */
    static void awaitEveryAck(Map<String, Path> files) {
        await().atMost(Duration.ofMinutes(3))
                .pollInterval(Duration.ofSeconds(1))
                .until(() -> Calls.read(files).lost(MESSAGES).isEmpty());
    }
}
