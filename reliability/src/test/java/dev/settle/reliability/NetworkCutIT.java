package dev.settle.reliability;

import static dev.settle.testbroker.SettleProcess.freePort;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime in a network namespace of its own, the broker on the other end of a veth pair, the link taken down for
 * 20 s mid-run and brought back: nothing is lost, readiness follows the link, and the same process reconnects.
 * Skipped, saying why, only where this machine does not allow network namespaces.
 */
// Not on PulsarFixture: its broker is a process of its own on the far end of the veth pair, so that the link can be
// cut.
class NetworkCutIT {
    /**
     * The link goes down once a tenth of them is acknowledged, so nine tenths are still to come: mid-run, which is
     * asserted. As in BrokerRestartIT (issue 43), the 14 000 more the run had before only added handling time after
     * the cut; {@code -Dsettle.reliability.cut.messages=20000} runs that many.
     */
    static final int MESSAGES = Integer.getInteger("settle.reliability.cut.messages", 6_000);

    static final Duration CUT = Duration.ofSeconds(20);

    @TempDir
    Path folder;

    @Test
    void aTwentySecondNetworkCutLosesNothingAndReadinessFollowsTheLink() throws Exception {
        NetworkNamespace.Result created = NetworkNamespace.create();
        if (created.namespace().isEmpty()) {
            System.out.println("network cut: skipped: " + created.reason());
        }
        Assumptions.assumeTrue(created.namespace().isPresent(), created.reason());
        String topic = Workload.topic("cut");
        Path record = folder.resolve("cut.calls");
        try (NetworkNamespace network = created.namespace().get();
                DurableBroker broker = new DurableBroker(folder.resolve("broker"), network.hostAddress())) {
            System.out.printf(
                    "network cut: the broker started in %.1f s on %s%n",
                    broker.start().toMillis() / 1000.0, broker.serviceUrl());
            try (PulsarClient client =
                    PulsarClient.builder().serviceUrl(broker.serviceUrl()).build()) {
                Workload.publish(client, topic, 0, MESSAGES);
            }
            int http = freePort();
            Path manifest = Workload.manifest(
                    folder.resolve("cut.yaml"),
                    broker.serviceUrl(),
                    http,
                    "",
                    List.of(new Workload.Subscription("cut", topic, "Shared", 4, record, "mixed")));
            try (SettleProcess settle = SettleProcess.run(manifest, "cut", network.exec())) {
                long pid = settle.process.pid();
                await().atMost(Duration.ofSeconds(60)).until(() -> network.status(http, "/readyz") == 200);
                AckCounter acks = new AckCounter(record);
                await().atMost(Duration.ofSeconds(60)).until(() -> acks.acks() >= MESSAGES / 10);

                long cut = System.nanoTime();
                network.cut();
                long acksAtCut = acks.acks();
                await().atMost(CUT)
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> network.status(http, "/readyz") == 503);
                Duration unready = Duration.ofNanos(System.nanoTime() - cut);
                assertThat(network.status(http, "/livez"))
                        .as("alive while the link is down")
                        .isEqualTo(200);
                long rest = CUT.toNanos() - (System.nanoTime() - cut);
                Waits.during(
                        "unready until the end of the cut",
                        Duration.ofNanos(Math.max(0, rest)),
                        () -> network.status(http, "/readyz") == 503,
                        () -> "/readyz " + network.status(http, "/readyz"));
                assertThat(acksAtCut).as("the cut came mid-run").isLessThan(MESSAGES);

                long restored = System.nanoTime();
                network.restore();
                await().atMost(Duration.ofMinutes(2))
                        .pollInterval(Duration.ofMillis(200))
                        .until(() -> network.status(http, "/readyz") == 200);
                Duration ready = Duration.ofNanos(System.nanoTime() - restored);
                long acksAtReady = acks.acks();
                await().atMost(Duration.ofMinutes(1))
                        .pollInterval(Duration.ofMillis(100))
                        .until(() -> acks.acks() > acksAtReady);
                Duration handling = Duration.ofNanos(System.nanoTime() - restored);
                System.out.printf(
                        "network cut: %d acknowledgements at the cut; unready %d ms after it; after the link came"
                                + " back: ready in %d ms, handling again in %d ms%n",
                        acksAtCut, unready.toMillis(), ready.toMillis(), handling.toMillis());

                await().atMost(Duration.ofMinutes(3))
                        .pollInterval(Duration.ofSeconds(1))
                        .until(() ->
                                Calls.read(Map.of("cut", record)).lost(MESSAGES).isEmpty());
                try (PulsarAdmin admin =
                        PulsarAdmin.builder().serviceHttpUrl(broker.adminUrl()).build()) {
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> Workload.stats(admin, topic, "cut").getMsgBacklog() == 0);
                }
                Calls calls = Calls.read(Map.of("cut", record));
                System.out.printf(
                        "network cut: %d lost of %d, %d acknowledged twice, stack frames beside handler failures %d%n",
                        calls.lost(MESSAGES).size(),
                        MESSAGES,
                        calls.duplicates(),
                        LogLines.stackFramesBesideHandlerFailures(settle.output));
                assertThat(calls.lost(MESSAGES)).isEmpty();
                // The probes here hang up after the status line, as a kubelet probe that times out does.
                assertThat(LogLines.stackFramesBesideHandlerFailures(settle.output))
                        .as("stack-trace lines in the runtime's log, the handler's own failures aside")
                        .isZero();
                assertThat(settle.process.isAlive())
                        .as("the same process, never restarted")
                        .isTrue();
                assertThat(settle.process.pid()).isEqualTo(pid);
                settle.sigterm();
                assertThat(settle.exitsWithin(30)).isTrue();
                assertThat(settle.process.exitValue()).isZero();
            }
        }
    }
}
