package dev.settle.reliability;

import static dev.settle.testbroker.SettleProcess.freePort;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.SubscriptionStats;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime SIGKILLed three times at random moments while it writes dead letters (a handler that throws on every
 * attempt, {@code maxAttempts: 2}), started again each time: every input ends with at least one dead letter that
 * names its cause, the input's backlog is 0, and the duplicates are bounded by what the broker held at each kill.
 *
 * <p>The bound is read from the broker, not guessed from a time window: once a killed runtime's consumer and producer
 * are gone, nothing more can be stored or acknowledged, so the broker's counts are final. A sequence with a letter
 * stored and its original not acknowledged then (the acknowledgement was still in the client's group, or the receipt
 * on its way back) is delivered again and gets another letter; no other sequence may. An original acknowledged without
 * its letter stored would show as more acknowledged originals than sequences with a letter. A sequence lettered twice
 * within one run is no kill's doing: the broker now and then dispatches a retried entry twice, and the duplicate guard
 * does not hold back the twin of a dead-lettered copy; those are counted apart and held to 1 % of a run's letters.
 * {@code -Dsettle.reliability.seed=<n>} repeats a run's kill moments.
 */
class DeadLetterKillIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    static final int MESSAGES = Integer.getInteger("settle.reliability.dlq.messages", 3_000);

    static final int KILLS = 3;
    static final int CONCURRENCY = 8;
    static final int MAX_ATTEMPTS = 2;
    /** The dead-letter topic's initial subscription, as the manifest's default names it ({@code <name>-dlq}). */
    static final String INITIAL_SUBSCRIPTION = "dlq-dlq";

    @TempDir
    Path folder;

    /** What the broker held once a killed runtime was gone: letters stored so far, originals still unacknowledged. */
    record AtKill(long letters, long unacknowledged) {}

    @Test
    void aSharedSubscriptionLosesNoDeadLetterAcrossThreeSigkills() throws Exception {
        long seed = Long.getLong("settle.reliability.seed", System.currentTimeMillis());
        System.out.printf(
                "dead-letter kill test: %d messages, %d SIGKILLs, seed %d (-Dsettle.reliability.seed=%d repeats it)%n",
                MESSAGES, KILLS, seed, seed);
        Random random = new Random(seed);
        // Kill once this share of the messages has a letter stored (counting every letter), then a few ms later.
        double[] killAt = new double[KILLS];
        for (int i = 0; i < KILLS; i++) {
            killAt[i] = 0.1 + 0.75 * random.nextDouble();
        }
        Arrays.sort(killAt);
        String topic = Workload.topic("dlq-kill");
        String deadLetters = topic + "-dlq";
        long started = System.nanoTime();
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        Workload.publish(client, topic, 0, MESSAGES);
        // Before the first runtime: the broker's counts of the subscription are read from the start.
        admin.topics().createSubscription(topic, "dlq", MessageId.earliest);
        List<AtKill> kills = new ArrayList<>();
        for (int run = 0; run <= KILLS; run++) {
            String instance = "run-" + run;
            Path manifest = Workload.manifest(
                    folder.resolve(instance + ".yaml"),
                    pulsar.endpoints().serviceUrl(),
                    freePort(),
                    "",
                    List.of(new Workload.Subscription(
                            "dlq",
                            topic,
                            "Shared",
                            CONCURRENCY,
                            folder.resolve(instance + ".calls"),
                            "fail",
                            Map.of(
                                    "maxAttempts",
                                    Integer.toString(MAX_ATTEMPTS),
                                    "deadLetterTopic",
                                    deadLetters,
                                    "failureBackoff",
                                    "none"),
                            Map.of())));
            SettleProcess settle = SettleProcess.run(manifest, instance);
            if (run == KILLS) {
                try (settle) {
                    // An original is acknowledged only once its letter is stored: backlog 0 means all are.
                    await().atMost(Duration.ofMinutes(2))
                            .pollInterval(Duration.ofMillis(500))
                            .until(() -> unacknowledged(admin, topic) == 0);
                    settle.sigterm();
                    assertThat(settle.exitsWithin(30)).isTrue();
                    assertThat(settle.process.exitValue()).isZero();
                }
                break;
            }
            // Killed while letters are being stored: once this run has stored some, a few milliseconds later.
            long before = stored(admin, deadLetters);
            long target = Math.max(before + 100, (long) (killAt[run] * MESSAGES));
            try (settle) {
                // Or once every original is acknowledged: a run that overshot its kill can leave too few letters.
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> stored(admin, deadLetters) >= target || unacknowledged(admin, topic) == 0);
                Waits.pause(Duration.ofMillis(random.nextInt(100)), "the kill lands at a random point of the work");
                settle.sigkill();
            }
            // Once the broker has let go of the killed consumer and producer, its counts are final.
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> admin.topics()
                                    .getStats(topic)
                                    .getSubscriptions()
                                    .get("dlq")
                                    .getConsumers()
                                    .isEmpty()
                            && admin.topics()
                                    .getStats(deadLetters)
                                    .getPublishers()
                                    .isEmpty());
            AtKill now = new AtKill(stored(admin, deadLetters), unacknowledged(admin, topic));
            kills.add(now);
            // Counting duplicates too, so weaker than the check by sequence below, but it fails at the kill.
            assertThat(MESSAGES - now.unacknowledged())
                    .as("originals acknowledged at kill %d, against letters stored", run + 1)
                    .isLessThanOrEqualTo(now.letters());
            System.out.printf(
                    "kill %d: SIGKILL after %d letters stored in this run (%d in all), %d originals unacknowledged%n",
                    run + 1, now.letters() - before, now.letters(), now.unacknowledged());
        }

        List<Message<byte[]>> letters = readAll(client, deadLetters);
        Map<Long, List<Message<byte[]>>> bySequence = new HashMap<>();
        for (Message<byte[]> letter : letters) {
            long sequence = Long.parseLong(new String(letter.getData(), StandardCharsets.UTF_8));
            bySequence.computeIfAbsent(sequence, s -> new ArrayList<>()).add(letter);
            assertThat(letter.getProperties())
                    .as("dead letter of sequence %d", sequence)
                    .containsEntry("settle.stage", "handler")
                    .containsEntry("settle.exception.class", IllegalStateException.class.getName())
                    .containsEntry(
                            "settle.exception.message", "failing sequence " + sequence + " on every attempt, as asked")
                    .containsEntry("settle.attempts", Integer.toString(MAX_ATTEMPTS))
                    .containsEntry("REAL_TOPIC", topic)
                    .containsEntry("REAL_SUBSCRIPTION", "dlq");
        }
        TreeSet<Long> lost = new TreeSet<>();
        for (long sequence = 0; sequence < MESSAGES; sequence++) {
            if (!bySequence.containsKey(sequence)) {
                lost.add(sequence);
            }
        }
        assertThat(lost).as("sequences with no dead letter").isEmpty();
        assertThat(unacknowledged(admin, topic)).isZero();
        assertThat(stored(admin, deadLetters))
                .as("letters kept for the initial subscription")
                .isEqualTo(letters.size());

        // The letters are read in the order they were stored: the first `letters` of a kill were stored before it.
        // A kill explains one more letter of a sequence in a later run; a second letter within one run it does not:
        // that is the broker dispatching one retried entry twice (docs/pulsar-client-notes.md), whose twin the
        // duplicate guard hands to the handler again when the first copy was dead-lettered, not acknowledged.
        long withinRuns = 0;
        int from = 0;
        for (int run = 0; run <= KILLS; run++) {
            int to = run < KILLS ? (int) kills.get(run).letters() : letters.size();
            Map<String, List<Long>> inRun = new HashMap<>();
            for (Message<byte[]> letter : letters.subList(from, to)) {
                inRun.computeIfAbsent(new String(letter.getData(), StandardCharsets.UTF_8), s -> new ArrayList<>())
                        .add(letter.getPublishTime());
            }
            long repeats = (to - from) - inRun.size();
            if (repeats > 0) {
                System.out.printf(
                        "run %d: %d letters of a sequence already lettered in the same run: %s%n",
                        run,
                        repeats,
                        inRun.entrySet().stream()
                                .filter(each -> each.getValue().size() > 1)
                                .map(each -> each.getKey() + " stored at " + each.getValue())
                                .toList());
            }
            assertThat(repeats)
                    .as("letters of run %d repeating a sequence of the same run", run)
                    .isLessThanOrEqualTo((to - from) / 100);
            withinRuns += repeats;
            from = to;
        }
        long bound = withinRuns;
        for (int kill = 0; kill < KILLS; kill++) {
            AtKill at = kills.get(kill);
            long withLetter = letters.subList(0, (int) at.letters()).stream()
                    .map(letter -> new String(letter.getData(), StandardCharsets.UTF_8))
                    .distinct()
                    .count();
            long acknowledged = MESSAGES - at.unacknowledged();
            System.out.printf(
                    "kill %d: %d sequences with a letter, %d originals acknowledged: %d letters to be written"
                            + " again%n",
                    kill + 1, withLetter, acknowledged, withLetter - acknowledged);
            assertThat(acknowledged)
                    .as("originals acknowledged at kill %d, against sequences with a letter stored", kill + 1)
                    .isLessThanOrEqualTo(withLetter);
            bound += withLetter - acknowledged;
        }
        long duplicates = letters.size() - MESSAGES;
        System.out.printf(
                "dead-letter kill test: 0 lost of %d, %d letters, %d duplicates (bound %d, of which %d within one"
                        + " run), %.1f s%n",
                MESSAGES, letters.size(), duplicates, bound, withinRuns, (System.nanoTime() - started) / 1e9);
        assertThat(duplicates)
                .as("letters beyond one a sequence, against those stored and unacknowledged at the kills and the"
                        + " repeats within a run")
                .isLessThanOrEqualTo(bound);
    }

    /** The letters stored so far: the backlog of the dead-letter topic's initial subscription, which nobody reads. */
    private static long stored(PulsarAdmin admin, String topic) throws PulsarAdminException {
        try {
            SubscriptionStats initial = Workload.stats(admin, topic, INITIAL_SUBSCRIPTION);
            return initial == null ? 0 : initial.getMsgBacklog();
        } catch (PulsarAdminException.NotFoundException notYet) {
            return 0;
        }
    }

    /** The input's messages not acknowledged, counted precisely (one entry each: published unbatched). */
    private static long unacknowledged(PulsarAdmin admin, String topic) throws PulsarAdminException {
        return admin.topics()
                .getStats(topic, true, false, false)
                .getSubscriptions()
                .get("dlq")
                .getMsgBacklog();
    }

    /** Every letter of the dead-letter topic in the order stored; as bytes, never decoded. */
    private static List<Message<byte[]>> readAll(PulsarClient client, String topic) throws Exception {
        List<Message<byte[]>> letters = new ArrayList<>();
        try (Reader<byte[]> reader = client.newReader(Schema.BYTES)
                .topic(topic)
                .startMessageId(MessageId.earliest)
                .create()) {
            while (reader.hasMessageAvailable()) {
                Message<byte[]> letter = reader.readNext(30, TimeUnit.SECONDS);
                assertThat(letter).as("a letter the topic said was available").isNotNull();
                letters.add(letter);
            }
        }
        return letters;
    }
}
