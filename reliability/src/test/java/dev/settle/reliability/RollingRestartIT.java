package dev.settle.reliability;

import static dev.settle.testbroker.SettleProcess.freePort;
import static dev.settle.testbroker.SettleProcess.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * A rolling restart done by hand, while messages keep arriving: a second runtime joins the subscription, then the
 * first gets SIGTERM. Nothing is lost, nothing acknowledged reaches a handler again, and on Key_Shared each runtime
 * sees each key's messages in order.
 */
@Isolated(
        "its SIGTERM comes once the joining runtime took 500 messages: beside the suite's other runtimes on two cores,"
                + " Key_Shared's joiner once took none in a minute")
class RollingRestartIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    /** At least 7 s of traffic, the restart in its middle: the SIGTERM came after 3 750-5 400 messages. */
    static final int MESSAGES = 7_000;
    /** Messages per second the producer keeps up; the stream goes on until 2 s after the SIGTERM ({@link SteadyStream}). */
    static final int RATE = 1_000;

    static final int CONCURRENCY = 4;

    @TempDir
    Path folder;

    @Test
    void aRollingRestartOnSharedLosesNothingAndRedeliversNothingAcknowledged() throws Exception {
        rollingRestart("Shared");
    }

    @Test
    void aRollingRestartOnKeySharedKeepsEachKeyInOrderWithinEachRuntime() throws Exception {
        Calls calls = rollingRestart("Key_Shared");
        for (String instance : List.of("first", "second")) {
            assertThat(calls.outOfOrderWithin(instance, Workload::key))
                    .as("first deliveries that came before an earlier sequence of their key, in %s", instance)
                    .isEmpty();
        }
    }

    private Calls rollingRestart(String type) throws Exception {
        long signalledMillis = 0;
        long published;
        String topic = Workload.topic("rolling");
        Map<String, Path> files = new LinkedHashMap<>();
        files.put("first", folder.resolve("first.calls"));
        files.put("second", folder.resolve("second.calls"));
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        int firstHttp = freePort();
        int secondHttp = freePort();
        try (SettleProcess first = SettleProcess.run(manifest(type, topic, "first", firstHttp), "first");
                Deferred second = start(type, topic, secondHttp)) {
            await().atMost(Duration.ofSeconds(60)).until(() -> status(firstHttp, "/readyz") == 200);
            try (SteadyStream stream = SteadyStream.start(client, topic, MESSAGES, RATE, Workload.KEYS)) {
                AckCounter firstAcks = new AckCounter(files.get("first"));
                await().atMost(Duration.ofSeconds(60)).until(() -> firstAcks.acks() >= MESSAGES / 8);

                second.begin();
                await().atMost(Duration.ofSeconds(60)).until(() -> status(secondHttp, "/readyz") == 200);
                AckCounter secondAcks = new AckCounter(files.get("second"));
                await().atMost(Duration.ofSeconds(60)).until(() -> secondAcks.acks() >= 500);
                String firstRepeats = repeatsKeptFromTheHandler(firstHttp);
                long signalled = System.nanoTime();
                signalledMillis = System.currentTimeMillis();
                first.sigterm();
                long publishedAtSigterm = stream.published();
                // Two more seconds of traffic after the SIGTERM, however late a loaded machine made it.
                stream.endAfter(Duration.ofSeconds(2));
                assertThat(first.exitsWithin(30)).as("the first runtime stops").isTrue();
                assertThat(first.process.exitValue()).isZero();
                System.out.printf(
                        "rolling restart on %s: the first runtime stopped %d ms after SIGTERM, %d acknowledgements"
                                + " in, the second %d; the broker's repeats the first kept from its handler before the"
                                + " SIGTERM: %s%n",
                        type,
                        (System.nanoTime() - signalled) / 1_000_000,
                        firstAcks.acks(),
                        secondAcks.acks(),
                        firstRepeats);
                published = stream.join();
                System.out.printf(
                        "rolling restart on %s: SIGTERM after %d of %d messages published%n",
                        type, publishedAtSigterm, published);
                long all = published;
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofSeconds(1))
                        .until(() -> Calls.read(files).lost(all).isEmpty());
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> Workload.stats(admin, topic, "rolling").getMsgBacklog() == 0);
                System.out.printf(
                        "rolling restart on %s: the broker's repeats the second kept from its handler: %s%n",
                        type, repeatsKeptFromTheHandler(secondHttp));
                second.process().sigterm();
                assertThat(second.process().exitsWithin(30)).isTrue();
            }
        }
        Calls calls = Calls.read(files);
        long sigterm = signalledMillis;
        // On Shared the broker now and then dispatches a retried message twice with one redelivery count, one copy to
        // each runtime, 1-48 ms apart (docs/pulsar-client-notes.md): those are counted apart, as FleetIT does. They
        // are not the restart's doing. Key_Shared is held to the strict rule.
        Set<Long> dispatchedTwice = type.equals("Shared") ? calls.dispatchedTwice(Map.of("first", sigterm)) : Set.of();
        List<List<Calls.Call>> again = calls.deliveredAfterAckCalls().stream()
                .filter(ofSequence ->
                        !dispatchedTwice.contains(ofSequence.get(0).sequence()))
                .toList();
        calls.deliveredAfterAckCalls()
                .forEach(repeated -> System.out.printf(
                        "rolling restart on %s: delivered again after its ack (SIGTERM at %d ms): %s%n",
                        type, sigterm, repeated));
        System.out.printf(
                "rolling restart on %s: %d lost of %d, %d acknowledged sequences delivered again besides %d copies the"
                        + " broker dispatched twice, %d acknowledged twice%n",
                type,
                calls.lost(published).size(),
                published,
                again.size(),
                dispatchedTwice.size(),
                calls.duplicates());
        assertThat(calls.lost(published)).as("sequences never acknowledged").isEmpty();
        assertThat(again)
                .as("acknowledged sequences that reached a handler again")
                .isEmpty();
        return calls;
    }

    /**
     * The runtime's {@code settle_duplicates_suppressed_total} line: copies the broker dispatched twice that reached
     * this runtime twice (its stop line counts those still queued). Printed, so that a failure says whether the broker
     * repeated entries in that run.
     */
    private static String repeatsKeptFromTheHandler(int http) {
        return SettleProcess.body(http, "/metrics")
                .lines()
                .filter(line -> line.startsWith("settle_duplicates_suppressed_total"))
                .findFirst()
                .orElse("none counted");
    }

    /** The second runtime, started only when {@link Deferred#begin()} says so. */
    private Deferred start(String type, String topic, int http) throws Exception {
        return new Deferred(manifest(type, topic, "second", http));
    }

    private Path manifest(String type, String topic, String instance, int http) throws Exception {
        return Workload.manifest(
                folder.resolve(instance + ".yaml"),
                pulsar.endpoints().serviceUrl(),
                http,
                "",
                List.of(new Workload.Subscription(
                        "rolling", topic, type, CONCURRENCY, folder.resolve(instance + ".calls"), "mixed")));
    }

    /** A runtime that starts later than the try-with-resources block that closes it. */
    private static final class Deferred implements AutoCloseable {
        private final Path manifest;
        private SettleProcess process;

        Deferred(Path manifest) {
            this.manifest = manifest;
        }

        void begin() throws Exception {
            process = SettleProcess.run(manifest, "second");
        }

        SettleProcess process() {
            return process;
        }

        @Override
        public void close() throws Exception {
            if (process != null) {
                process.close();
            }
        }
    }
}
