package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * {@code settle dlq replay} SIGKILLed half-way and run again: each letter goes back once, bar the one in hand. A class
 * of its own so that only it runs alone (DlqReplayIT's other tests run beside the build's other classes).
 */
@Isolated("the killed replay measures a replay's pace on the shared broker: alone it sends 2 000 letters in seconds;"
        + " beside the kill tests' runtimes in a full build it once sent 129 in a minute, and once none in four")
class DlqReplayKillIT {
    private static final int LETTERS = 2_000;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final SettleCommand settle = new SettleCommand();

    @Test
    void aReplayKilledHalfWayAndRunAgainSendsEachLetterOnceBarTheOneInHand(@TempDir Path folder) throws Exception {
        String topic = pulsar.topic("replay");
        String deadLetters = topic + "-dlq";
        Path manifest = Files.writeString(
                folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: %s
                subscriptions:
                  - name: orders
                    topics: [%s]
                    jar: not-built-yet.jar
                    maxAttempts: 3
                    deadLetterTopic: %s
                """.formatted(pulsar.endpoints().serviceUrl(), topic, deadLetters));
        letters(topic, deadLetters);

        // Fast enough that copies sent but not yet stored at the kill are several, should the replay acknowledge a
        // letter before its copy is stored: then some letters never go back.
        try (SettleProcess first = SettleProcess.command(
                "replay killed", "dlq", "replay", manifest.toString(), "orders", "--rate", "1000/s")) {
            await().atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> sent(topic) >= LETTERS / 4);
            first.sigkill();
        }
        long beforeRerun = sent(topic);
        assertThat(beforeRerun).as("the kill came half-way").isBetween((long) LETTERS / 4, LETTERS - 1L);

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();

        List<String> back = all(topic);
        long distinct = back.stream().distinct().count();
        assertThat(distinct).as("every letter went back").isEqualTo(LETTERS);
        // Acknowledged at once after each copy is stored: only the letter in hand at the kill can go twice.
        assertThat(back.size() - distinct).as("letters sent twice").isLessThanOrEqualTo(1);
        assertThat(pulsar.backlog(deadLetters, DlqReplay.SUBSCRIPTION)).isZero();
    }

    /** The letters as Settle writes them (as DlqReplayIT's), from {@code topic}, which a STRING producer made first. */
    private void letters(String topic, String deadLetters) throws Exception {
        pulsar.client().newProducer(Schema.STRING).topic(topic).create().close();
        try (Producer<String> producer = pulsar.client()
                .newProducer(Schema.STRING)
                .topic(deadLetters)
                .enableBatching(false)
                .create()) {
            for (int i = 0; i < LETTERS; i++) {
                producer.newMessage()
                        .value("handler-" + i)
                        .key("k-" + i)
                        .properties(Map.of(
                                "origin",
                                "test",
                                DeadLetterProperties.REAL_TOPIC,
                                topic,
                                DeadLetterProperties.REAL_SUBSCRIPTION,
                                "orders",
                                DeadLetterProperties.ORIGIN_MESSAGE_ID,
                                "1:" + i + ":-1",
                                DeadLetterProperties.STAGE,
                                "handler",
                                DeadLetterProperties.EXCEPTION_CLASS,
                                "java.lang.IllegalStateException"))
                        .sendAsync();
            }
            producer.flush();
        }
    }

    /** The payload of every message on {@code on}, from the start to its end now, read with a reader. */
    private List<String> all(String on) throws Exception {
        List<String> read = new ArrayList<>();
        try (Reader<byte[]> reader = pulsar.client()
                .newReader(Schema.BYTES)
                .topic(on)
                .startMessageId(MessageId.earliest)
                .create()) {
            while (reader.hasMessageAvailable()) {
                Message<byte[]> message = reader.readNext(5, TimeUnit.SECONDS);
                if (message != null) {
                    read.add(new String(message.getData(), StandardCharsets.UTF_8));
                }
            }
        }
        return read;
    }

    /** Messages stored on {@code on} since it was made; 0 when it does not exist. */
    private long sent(String on) throws Exception {
        try {
            return pulsar.admin().topics().getStats(on).getMsgInCounter();
        } catch (org.apache.pulsar.client.admin.PulsarAdminException.NotFoundException notYet) {
            return 0;
        }
    }
}
