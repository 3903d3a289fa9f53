package dev.settle.runtime.cli;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.testbroker.PulsarFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;

/**
 * What the tests of {@code settle dlq replay} start from ({@link DlqReplayIT}, {@link DlqReplayKillIT}): a manifest
 * whose subscription 'orders' reads a topic of the test's own and dead-letters to another, letters written there as
 * Settle writes them, and what reached a topic since.
 */
final class ReplayTopics {
    final String topic;
    final String deadLetters;
    final Path manifest;
    private final PulsarFixture pulsar;

    ReplayTopics(PulsarFixture pulsar, Path folder) throws Exception {
        this.pulsar = pulsar;
        topic = pulsar.topic("replay");
        deadLetters = topic + "-dlq";
        manifest = Files.writeString(
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
    }

    /**
     * Writes {@code count} letters as Settle writes them: payload ({@code stage-i}) and key numbered, from
     * {@link #topic}, which a STRING producer made first, as the upstream producer of the dead-lettered messages did.
     */
    void letters(int count, String stage, Map<String, String> extra) throws Exception {
        pulsar.client().newProducer(Schema.STRING).topic(topic).create().close();
        try (Producer<String> producer = pulsar.client()
                .newProducer(Schema.STRING)
                .topic(deadLetters)
                .enableBatching(false)
                .create()) {
            for (int i = 0; i < count; i++) {
                Map<String, String> properties = new HashMap<>(extra);
                properties.put("origin", "test");
                properties.put(DeadLetterProperties.REAL_TOPIC, topic);
                properties.put(DeadLetterProperties.REAL_SUBSCRIPTION, "orders");
                properties.put(DeadLetterProperties.ORIGIN_MESSAGE_ID, "1:" + i + ":-1");
                properties.put(DeadLetterProperties.STAGE, stage);
                properties.put(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.IllegalStateException");
                producer.newMessage()
                        .value(stage + "-" + i)
                        .key("k-" + i)
                        .properties(properties)
                        .sendAsync();
            }
            producer.flush();
        }
    }

    /** Every message on {@code on}, from the start to its end now, with a reader: nothing is acknowledged. */
    List<Message<byte[]>> all(String on) throws Exception {
        List<Message<byte[]>> read = new ArrayList<>();
        try (Reader<byte[]> reader = pulsar.client()
                .newReader(Schema.BYTES)
                .topic(on)
                .startMessageId(MessageId.earliest)
                .create()) {
            while (reader.hasMessageAvailable()) {
                Message<byte[]> message = reader.readNext(5, TimeUnit.SECONDS);
                if (message != null) {
                    read.add(message);
                }
            }
        }
        return read;
    }

    static String text(Message<byte[]> message) {
        return new String(message.getData(), StandardCharsets.UTF_8);
    }

    /** Messages stored on {@code on} since it was made; 0 when it does not exist. */
    long sent(String on) throws Exception {
        try {
            return pulsar.admin().topics().getStats(on).getMsgInCounter();
        } catch (PulsarAdminException.NotFoundException notYet) {
            return 0;
        }
    }

    /** The letters {@code settle dlq replay}'s subscription has not acknowledged. */
    long replayBacklog() throws Exception {
        return pulsar.admin()
                .topics()
                .getStats(deadLetters)
                .getSubscriptions()
                .get(DlqReplay.SUBSCRIPTION)
                .getMsgBacklog();
    }
}
