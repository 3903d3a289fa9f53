package dev.settle.runtime.cli;

import static dev.settle.testbroker.SettleProcess.freePort;
import static dev.settle.testbroker.SettleProcess.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A downstream outage with no dead-letter cap: every message fails, for ever. Backed off, that must cost next to
 * nothing (it looped hot at about 4 ms a message before the failure backoff existed).
 */
class BackoffCostIT {
    private static final int MESSAGES = 1_000;

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void aThousandMessagesFailingForEverCostUnderTenPercentOfACoreOnceBackedOff() throws Exception {
        String topic = pulsar.topic("failing");
        TestJar.at(folder.resolve("failing.jar"))
                .source("test.Failing", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Failing implements Handler<String> {
                            @Override public Outcome handle(Delivery<String> delivery) {
                                throw new IllegalStateException("the downstream service is down");
                            }
                        }
                        """)
                .services("test.Failing")
                .build();
        int http = freePort();
        Path manifest = pulsar.manifest()
                .httpPort(http)
                .subscription("failing", topic)
                .jar("failing.jar")
                .set("concurrency", 8)
                .writeTo(folder.resolve("failing.yaml"));
        // Unbatched (the fixture's publish): with batches and no batch-index acknowledgement, one message's
        // redelivery brings back its whole batch, held siblings too, and no backoff can hold (docs/manifest.md,
        // failureBackoff).
        pulsar.publish(topic, MESSAGES, i -> "m" + i);
        try (SettleProcess settle = SettleProcess.run(manifest, "failing")) {
            await().atMost(Duration.ofSeconds(60)).until(() -> status(http, "/readyz") == 200);
            // The default backoff: 100ms, 200ms, ... 12.8s, 25.6s, then 30s. Once every message has failed nine
            // times (about 25.5 s after its first attempt), each waits 25.6 s and then 30 s: backed off. Before, a
            // 40 s pause stood for this.
            long climbing = System.nanoTime();
            Waits.until(
                    "each of the " + MESSAGES + " messages failed nine times",
                    Duration.ofSeconds(120),
                    () -> errors(http),
                    errors -> errors >= 9.0 * MESSAGES);
            System.out.printf(
                    "backoff: every message failed nine times %d ms after the runtime was ready%n",
                    (System.nanoTime() - climbing) / 1_000_000);
            Duration cpuBefore =
                    settle.process.toHandle().info().totalCpuDuration().orElseThrow();
            long wallBefore = System.nanoTime();
            Waits.pause(Duration.ofSeconds(30), "the window the CPU is measured over");
            Duration cpu = settle.process
                    .toHandle()
                    .info()
                    .totalCpuDuration()
                    .orElseThrow()
                    .minus(cpuBefore);
            double share = cpu.toNanos() / (double) (System.nanoTime() - wallBefore);
            System.out.printf(
                    "backoff: %d messages failing for ever, default backoff: %.2f %% of one core over"
                            + " 30 s (%d ms of CPU)%n",
                    MESSAGES, share * 100, cpu.toMillis());

            assertThat(settle.process.isAlive()).isTrue();
            // Measured 3.2 % here (the idle runtime's own timers and the JIT included); asserted generously, as
            // timing is in tests: a hot loop costs a whole core.
            assertThat(share).as("share of one core").isLessThan(0.10);
        }
    }

    /** The failures counted so far, as the runtime's /metrics says (0 before the first). */
    private static double errors(int http) {
        Double errors = Exposition.parse(SettleProcess.body(http, "/metrics"))
                .value("settle_outcomes_total{subscription=\"failing\",outcome=\"error\"}");
        return errors == null ? 0 : errors;
    }
}
