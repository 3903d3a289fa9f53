package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * {@code settle dlq replay} SIGKILLed half-way and run again: each letter goes back once, bar the one in hand. A class
 * of its own so that only it runs alone (DlqReplayIT's other tests run beside the build's other classes).
 */
@Tag("alone") // runs in the runtime-it-alone module
@Isolated("the killed replay measures a replay's pace on the shared broker: alone it sends 2 000 letters in seconds;"
        + " beside the kill tests' runtimes in a full build it once sent 129 in a minute, and once none in four")
class DlqReplayKillIT {
    private static final int LETTERS = 2_000;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final SettleCommand settle = new SettleCommand();

    @Test
    void aReplayKilledHalfWayAndRunAgainSendsEachLetterOnceBarTheOneInHand(@TempDir Path folder) throws Exception {
        ReplayTopics replay = new ReplayTopics(pulsar, folder);
        String topic = replay.topic;
        Path manifest = replay.manifest;
        replay.letters(LETTERS, "handler", Map.of());

        // Fast enough that copies sent but not yet stored at the kill are several, should the replay acknowledge a
        // letter before its copy is stored: then some letters never go back.
        try (SettleProcess first = SettleProcess.command(
                "replay killed", "dlq", "replay", manifest.toString(), "orders", "--rate", "1000/s")) {
            await().atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> replay.sent(topic) >= LETTERS / 4);
            first.sigkill();
        }
        long beforeRerun = replay.sent(topic);
        assertThat(beforeRerun).as("the kill came half-way").isBetween((long) LETTERS / 4, LETTERS - 1L);

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();

        List<String> back = replay.all(topic).stream().map(ReplayTopics::text).toList();
        long distinct = back.stream().distinct().count();
        assertThat(distinct).as("every letter went back").isEqualTo(LETTERS);
        // Acknowledged at once after each copy is stored: only the letter in hand at the kill can go twice.
        assertThat(back.size() - distinct).as("letters sent twice").isLessThanOrEqualTo(1);
        assertThat(replay.replayBacklog()).isZero();
    }
}
