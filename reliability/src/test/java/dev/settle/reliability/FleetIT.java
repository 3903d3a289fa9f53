package dev.settle.reliability;

import static dev.settle.testbroker.SettleProcess.freePort;
import static dev.settle.testbroker.SettleProcess.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongFunction;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fleet scaled out and in while messages keep coming: three runtimes ({@code a}, {@code b}, {@code c}) run one
 * manifest with a Key_Shared and a Shared subscription of the same topic; a fourth ({@code d}) joins mid-stream,
 * {@code b} is SIGKILLed, {@code c} gets SIGTERM. Then, on each subscription: nothing lost, the backlog 0, and
 * duplicates only from the SIGKILL (within what {@code b} could leave unacknowledged) and, on Shared, from the
 * broker's double dispatch of a retried copy (both copies handled while their runtimes ran). On Key_Shared, what
 * docs/scaling.md says Pulsar 4 promises: a key at one runtime at a time (none handles a key while another holds a
 * message of it in a {@code retryAfter} wait), and each key's messages first handled in order, within each runtime
 * and across them. Seen failing with the consumers' {@code allowOutOfOrderDelivery} on: keys that moved to the
 * joining runtime were handled there while their old runtime still held a message of them.
 */
class FleetIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    /**
     * About 30 s of traffic at {@link #RATE}, the join, the kill and the stop in its middle (the stream goes on past
     * it until 5 s after the stop: {@link SteadyStream}). The stop came after about 6 500 messages.
     */
    static final int MESSAGES = Integer.getInteger("settle.reliability.fleet.messages", 9_000);

    static final int RATE = 300;
    /**
     * Not a multiple of 20: the handler's {@code mixed} answer is chosen by {@code sequence % 20} and a key is {@code
     * sequence % KEYS}, so with 200 keys each key got one answer for all its messages, and a key whose every message
     * waits {@link #HOLD} in {@code retryAfter} took 75 x 2 s with its retries kept in key order (a run of 190 s).
     */
    static final int KEYS = 201;

    static final int CONCURRENCY = 4;
    /**
     * How long the handler holds a message it answers {@code retryAfter} (one in twenty, on its first attempt): about
     * ten messages held in each runtime at any time, so that when a runtime joins or leaves, keys that move have a
     * message pending at their old owner. Where Pulsar keeps a key at one runtime at a time, no other runtime handles
     * that key until the hold ends.
     */
    static final Duration HOLD = Duration.ofSeconds(2);

    static final List<String> INSTANCES = List.of("a", "b", "c", "d");
    static final String KEY_SHARED = "fleet-key-shared";
    static final String SHARED = "fleet-shared";
    static final LongFunction<String> KEY = sequence -> Workload.key(sequence, KEYS);

    @TempDir
    Path folder;

    @Test
    void aFleetLosesNothingAndKeepsEachKeyInOrderWhileRuntimesJoinDieAndStop() throws Exception {
        String topic = Workload.topic("fleet");
        Map<String, Integer> http = new LinkedHashMap<>();
        for (String instance : INSTANCES) {
            http.put(instance, freePort());
        }
        Map<String, SettleProcess> running = new LinkedHashMap<>();
        SteadyStream stream = null;
        long published;
        long killMillis;
        // When b and c went: a hold, or an acknowledgement, of theirs ends there.
        Map<String, Long> gone = new LinkedHashMap<>();
        long started = System.nanoTime();
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        try {
            for (String instance : List.of("a", "b", "c")) {
                running.put(instance, start(topic, instance, http.get(instance)));
            }
            for (String instance : List.of("a", "b", "c")) {
                await().atMost(Duration.ofSeconds(90)).until(() -> status(http.get(instance), "/readyz") == 200);
            }
            stream = SteadyStream.start(client, topic, MESSAGES, RATE, KEYS);

            // Each step waits until the runtimes it affects have handled messages on both subscriptions, so
            // every step happens with traffic in flight.
            awaitAcks("a", 10 * RATE / 3);
            running.put("d", start(topic, "d", http.get("d")));
            await().atMost(Duration.ofSeconds(90)).until(() -> status(http.get("d"), "/readyz") == 200);
            awaitAcks("d", RATE);

            awaitAcks("b", acks("b") + RATE / 2);
            killMillis = System.currentTimeMillis();
            running.get("b").sigkill();
            gone.put("b", killMillis);
            System.out.printf(
                    "fleet: b SIGKILLed after %d acknowledgements on %s, %d on %s%n",
                    acks("b", KEY_SHARED), KEY_SHARED, acks("b", SHARED), SHARED);

            awaitAcks("c", acks("c") + RATE / 2);
            long signalled = System.nanoTime();
            gone.put("c", System.currentTimeMillis());
            running.get("c").sigterm();
            assertThat(running.get("c").exitsWithin(30))
                    .as("c stops on SIGTERM")
                    .isTrue();
            assertThat(running.get("c").process.exitValue()).isZero();
            System.out.printf("fleet: c stopped %d ms after SIGTERM%n", (System.nanoTime() - signalled) / 1_000_000);
            // Five more seconds of traffic after the stop, however late a loaded machine made the steps before it.
            long publishedAtStop = stream.published();
            stream.endAfter(Duration.ofSeconds(5));
            published = stream.join();
            System.out.printf("fleet: c stopped after %d of %d messages published%n", publishedAtStop, published);
            long all = published;
            for (String subscription : List.of(KEY_SHARED, SHARED)) {
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofSeconds(1))
                        .until(() -> Calls.read(files(subscription)).lost(all).isEmpty());
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> Workload.stats(admin, topic, subscription).getMsgBacklog() == 0);
            }
            for (String instance : List.of("a", "d")) {
                running.get(instance).sigterm();
            }
            for (String instance : List.of("a", "d")) {
                assertThat(running.get(instance).exitsWithin(30))
                        .as("%s stops on SIGTERM", instance)
                        .isTrue();
                assertThat(running.get(instance).process.exitValue()).isZero();
            }
            for (String subscription : List.of(KEY_SHARED, SHARED)) {
                assertThat(Workload.stats(admin, topic, subscription).getMsgBacklog())
                        .as("%s's backlog once every runtime is gone", subscription)
                        .isZero();
            }
        } finally {
            if (stream != null) {
                stream.close();
            }
            for (SettleProcess process : running.values()) {
                process.close();
            }
        }

        // Key order first, printed before any assertion can fail, so that one run shows every figure.
        Calls keyShared = Calls.read(files(KEY_SHARED));
        Map<String, List<String>> within = new LinkedHashMap<>();
        for (String instance : INSTANCES) {
            within.put(instance, keyShared.outOfOrderWithin(instance, KEY));
        }
        List<String> across = keyShared.outOfOrderAcross(KEY);
        List<String> twoAtOnce = keyShared.keyElsewhereDuringHold(KEY, HOLD, gone);
        System.out.printf(
                "fleet on %s: first handlings out of key order within each runtime %s, across runtimes %d %s; keys"
                        + " handled elsewhere while one runtime held a message of theirs: %d of %d holds %s%n",
                KEY_SHARED,
                within,
                across.size(),
                across,
                twoAtOnce.size(),
                keyShared.all().stream()
                        .filter(call -> call.outcome().equals("retry_after"))
                        .count(),
                twoAtOnce);

        for (String subscription : List.of(KEY_SHARED, SHARED)) {
            Calls calls = Calls.read(files(subscription));
            // On Shared the broker now and then dispatches a retried message twice with one count, to two runtimes
            // (docs/pulsar-client-notes.md): those pairs are counted apart. Key_Shared is held to the strict rule.
            Set<Long> dispatchedTwice = subscription.equals(SHARED) ? calls.dispatchedTwice(gone) : Set.of();
            Map<String, Long> duplicates = calls.duplicatesByFirstInstance(dispatchedTwice);
            long inWindow = calls.acksSince("b", killMillis - KillIT.ACK_WINDOW.toMillis());
            long bound = CONCURRENCY + inWindow;
            System.out.printf(
                    "fleet on %s: %d lost of %d, %d calls, acknowledgements by runtime %s, duplicates by the runtime"
                            + " that acknowledged first %s besides %d copies the broker dispatched twice; the"
                            + " SIGKILL's bound %d (%d calls in flight + %d acknowledgements in the %d ms before it);"
                            + " %.1f s%n",
                    subscription,
                    calls.lost(published).size(),
                    published,
                    calls.all().size(),
                    acksByInstance(calls),
                    duplicates,
                    dispatchedTwice.size(),
                    bound,
                    CONCURRENCY,
                    inWindow,
                    KillIT.ACK_WINDOW.toMillis(),
                    (System.nanoTime() - started) / 1e9);
            calls.duplicateCalls()
                    .forEach(repeated ->
                            System.out.printf("fleet on %s: acknowledged twice: %s%n", subscription, repeated));
            assertThat(calls.lost(published))
                    .as("%s: sequences never acknowledged", subscription)
                    .isEmpty();
            assertThat(calls.duplicatesWithinOneInstance())
                    .as("%s: sequences one runtime acknowledged twice", subscription)
                    .isZero();
            assertThat(duplicates.getOrDefault("b", 0L))
                    .as("%s: duplicates of what the SIGKILLed b had acknowledged", subscription)
                    .isLessThanOrEqualTo(bound);
            for (String instance : List.of("a", "c", "d")) {
                assertThat(duplicates.getOrDefault(instance, 0L))
                        .as("%s: duplicates of what %s (never killed) had acknowledged", subscription, instance)
                        .isZero();
            }
        }

        within.forEach((instance, problems) -> assertThat(problems)
                .as("%s: first handlings of a key's messages out of order within %s", KEY_SHARED, instance)
                .isEmpty());
        assertThat(across)
                .as("%s: first handlings of a key's messages out of order across the runtimes", KEY_SHARED)
                .isEmpty();
        assertThat(twoAtOnce)
                .as("%s: a key handled by another runtime while one held a message of it", KEY_SHARED)
                .isEmpty();
    }

    private SettleProcess start(String topic, String instance, int http) throws Exception {
        List<Workload.Subscription> subscriptions = new ArrayList<>();
        for (String subscription : List.of(KEY_SHARED, SHARED)) {
            subscriptions.add(new Workload.Subscription(
                    subscription,
                    topic,
                    subscription.equals(KEY_SHARED) ? "Key_Shared" : "Shared",
                    CONCURRENCY,
                    file(instance, subscription),
                    "mixed",
                    Map.of(),
                    Map.of("retryAfterMillis", Long.toString(HOLD.toMillis()))));
        }
        Path manifest = Workload.manifest(
                folder.resolve(instance + ".yaml"), pulsar.endpoints().serviceUrl(), http, "", subscriptions);
        return SettleProcess.run(manifest, instance);
    }

    private Path file(String instance, String subscription) {
        return folder.resolve(instance + "-" + subscription + ".calls");
    }

    /** One subscription's record files, instance to file. */
    private Map<String, Path> files(String subscription) {
        Map<String, Path> files = new LinkedHashMap<>();
        INSTANCES.forEach(instance -> files.put(instance, file(instance, subscription)));
        return files;
    }

    private long acks(String instance, String subscription) throws Exception {
        return new AckCounter(file(instance, subscription)).acks();
    }

    /** The smaller of {@code instance}'s acknowledgement counts on the two subscriptions. */
    private long acks(String instance) throws Exception {
        return Math.min(acks(instance, KEY_SHARED), acks(instance, SHARED));
    }

    /** Waits until {@code instance} has at least {@code count} acknowledgements on each subscription. */
    private void awaitAcks(String instance, long count) {
        await().atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> acks(instance) >= count);
    }

    private static Map<String, Long> acksByInstance(Calls calls) {
        Map<String, Long> acks = new LinkedHashMap<>();
        INSTANCES.forEach(instance -> acks.put(instance, 0L));
        calls.all().stream().filter(Calls.Call::acked).forEach(call -> acks.merge(call.instance(), 1L, Long::sum));
        return acks;
    }
}
