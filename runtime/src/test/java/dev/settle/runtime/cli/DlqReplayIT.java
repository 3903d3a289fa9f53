package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.time.SystemTime;
import dev.settle.sdk.Handler;
import dev.settle.testbroker.PulsarFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * {@code settle dlq replay} on the real broker: letters go back once each, a dry run changes nothing, parking. The
 * tests run side by side, each on topics of its own; the killed replay, which measures a replay's pace, runs alone
 * ({@link DlqReplayKillIT}).
 */
@Execution(ExecutionMode.CONCURRENT)
class DlqReplayIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final SettleCommand settle = new SettleCommand();

    private PulsarClient client;
    private PulsarAdmin admin;
    private String topic;
    private String deadLetters;
    private Path manifest;
    private ReplayTopics replay;

    @BeforeEach
    void connect(@TempDir Path folder) throws Exception {
        client = pulsar.client();
        admin = pulsar.admin();
        replay = new ReplayTopics(pulsar, folder);
        topic = replay.topic;
        deadLetters = replay.deadLetters;
        manifest = replay.manifest;
    }

    @Test
    void aThousandLettersGoBackOnceEachWithKeyPropertiesAndReplayCountAfterADryRunThatChangedNothing()
            throws Exception {
        replay.letters(1_000, "handler", Map.of());

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders", "--dry-run"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out())
                .contains("1000 would be replayed, 0 would be parked")
                .contains("dry run: nothing was sent or acknowledged");
        // Nothing sent, no subscription made, the letters still waiting where they were.
        assertThat(sent()).isZero();
        assertThat(admin.topics().getSubscriptions(deadLetters)).doesNotContain(DlqReplay.SUBSCRIPTION);

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();

        assertThat(settle.out()).contains("1000 replayed, 0 parked");
        List<Message<byte[]>> back = replay.all(topic);
        assertThat(back).hasSize(1_000);
        assertThat(back.stream().map(ReplayTopics::text).distinct()).hasSize(1_000);
        Message<byte[]> one = back.get(7);
        assertThat(one.getKey()).isEqualTo("k-" + ReplayTopics.text(one).substring("handler-".length()));
        // Under the topic's own schema, as the original was.
        assertThat(one.getSchemaVersion()).isNotNull();
        assertThat(one.getProperties())
                .containsEntry("origin", "test")
                .containsEntry(DeadLetterProperties.REPLAY_COUNT, "1")
                .doesNotContainKeys(
                        DeadLetterProperties.STAGE,
                        DeadLetterProperties.REAL_TOPIC,
                        DeadLetterProperties.EXCEPTION_CLASS);
        assertThat(replay.replayBacklog()).isZero();
    }

    /**
     * Issue 50: after a replay, a dry run still said "1 would be replayed", the real run then replayed 0 without
     * saying why, and list still counted the replayed letter. A dry run now reads what the run would receive, list
     * what is still waiting, and a letter of another subscription sharing the topic is none of theirs.
     */
    @Test
    void aDryRunCountsWhatTheNextRunReplaysAndAReplayedLetterIsNeitherCountedNorReplayedAgain() throws Exception {
        replay.letters(2, "handler", Map.of());
        replay.letters(1, "handler", Map.of(DeadLetterProperties.SUBSCRIPTION, "shipping"));

        assertThat(settle.run("dlq", "list", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out())
                .contains("2 dead letters")
                .contains("1 more of other subscriptions that share the dead-letter topic, not counted");
        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders", "--dry-run"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out()).contains("2 would be replayed, 0 would be parked");

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out())
                .contains("2 replayed, 0 parked")
                .contains("1 left for the other subscriptions that share the dead-letter topic");
        assertThat(sent()).isEqualTo(2);

        assertThat(settle.run("dlq", "list", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out()).contains("0 dead letters").doesNotContain("oldest");
        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders", "--dry-run"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out())
                .contains("0 would be replayed, 0 would be parked")
                .contains("nothing would be replayed: no dead letter of subscription 'orders' is waiting");
        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out())
                .contains("0 replayed, 0 parked")
                .contains("nothing replayed: no dead letter of subscription 'orders' is waiting on " + deadLetters);
        assertThat(sent()).as("nothing sent twice").isEqualTo(2);
        assertThat(replay.replayBacklog())
                .as("the other subscription's letter waits for its own replay")
                .isEqualTo(1);
    }

    @Test
    void aLetterReplayedThreeTimesIsParkedAndWhereLeavesTheOthersForALaterRun() throws Exception {
        replay.letters(2, "handler", Map.of(DeadLetterProperties.REPLAY_COUNT, "3"));
        replay.letters(3, "handler", Map.of(DeadLetterProperties.REPLAY_COUNT, "2"));
        replay.letters(4, "decode", Map.of());

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders", "--where", "stage=handler"))
                .as(settle.err())
                .isZero();

        assertThat(settle.out()).contains("3 replayed, 2 parked, 4 left by --where");
        assertThat(replay.all(topic))
                .hasSize(3)
                .allSatisfy(message ->
                        assertThat(message.getProperties()).containsEntry(DeadLetterProperties.REPLAY_COUNT, "3"));
        List<Message<byte[]>> parked = replay.all(deadLetters + "-parked");
        assertThat(parked)
                .hasSize(2)
                .allSatisfy(message -> assertThat(message.getProperties())
                        .containsEntry(DeadLetterProperties.STAGE, "handler")
                        .containsEntry(DeadLetterProperties.REPLAY_COUNT, "3"));
        assertThat(replay.replayBacklog()).isEqualTo(4);

        // The letters --where left are there for the next run.
        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders", "--where", "stage=decode"))
                .isZero();
        assertThat(settle.out()).contains("4 replayed, 0 parked, 0 left by --where");
        assertThat(replay.all(topic)).hasSize(7);
        assertThat(replay.replayBacklog()).isZero();
    }

    /** What a JSON topic carries. */
    record Order(String id) {}

    @Test
    void aLetterWhoseCopyIsNotStoredIsLeftWaitingNotAcknowledged() throws Exception {
        replay.letters(3, "handler", Map.of());
        // The topic's schema is JSON now: "handler-0" is no JSON, so no copy can be stored there.
        admin.topics().delete(topic, true);
        client.newProducer(Schema.JSON(Order.class)).topic(topic).create().close();

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();

        assertThat(settle.out())
                .contains("0 replayed")
                .contains("3 left: their payload does not fit their topic's schema");
        // Not one letter acknowledged: each is acknowledged only once its copy is stored.
        assertThat(replay.replayBacklog()).isEqualTo(3);
        assertThat(sent()).isZero();
    }

    private long sent() throws Exception {
        return replay.sent(topic);
    }

    /**
     * Runs subscription 'orders' of the manifest with {@code handler} until {@code letters} dead letters are stored,
     * then stops it (a replayed letter is then not handled again), after sending each message of {@code inputs} (its
     * payload, and its properties) to the subscription's topic.
     */
    private void deadLettered(
            SubscriptionSpec.Builder spec, Handler<String> handler, Map<String, Map<String, String>> inputs)
            throws Exception {
        SubscriptionSpec built =
                spec.deadLetter(3, deadLetters).failureBackoff(Optional.empty()).build();
        try (SystemTime time = new SystemTime()) {
            SubscriptionDriver driver = SubscriptionDriver.start(
                    client,
                    built,
                    SdkHandlerPort.of(handler, String.class, built),
                    time,
                    new SettleMetrics().forSubscription("orders"));
            try {
                await().atMost(Duration.ofSeconds(90)).until(driver::isConnected);
                try (Producer<String> producer = client.newProducer(Schema.STRING)
                        .topic(topic)
                        .enableBatching(false)
                        .create()) {
                    for (Map.Entry<String, Map<String, String>> input : inputs.entrySet()) {
                        producer.newMessage()
                                .value(input.getKey())
                                .properties(input.getValue())
                                .send();
                    }
                }
                await().atMost(Duration.ofSeconds(90)).until(() -> replay.sent(deadLetters) >= inputs.size());
            } finally {
                driver.stop(Duration.ofSeconds(5));
            }
        }
    }

    /** The one message on {@code on} whose payload is {@code text}. */
    private Message<byte[]> only(String on, String text) throws Exception {
        return replay.all(on).stream()
                .filter(message -> ReplayTopics.text(message).equals(text))
                .reduce((one, two) -> {
                    throw new AssertionError("two messages '" + text + "' on " + on);
                })
                .orElseThrow(() -> new AssertionError("no message '" + text + "' on " + on));
    }

    @Test
    void anInputNamingAnotherTopicIsDeadLetteredWithItsRealOriginAndReplayedOnlyToTheSubscriptionsTopic()
            throws Exception {
        String payments = topic + "-payments";
        Handler<String> boom = delivery -> {
            throw new IllegalStateException("boom");
        };
        deadLettered(
                SubscriptionSpec.builder("orders", List.of(topic)),
                boom,
                Map.of("pay me", Map.of(DeadLetterProperties.REAL_TOPIC, payments, "approved-by", "finance")));

        Message<byte[]> letter = only(deadLetters, "pay me");
        assertThat(letter.getProperties())
                .containsEntry(DeadLetterProperties.REAL_TOPIC, topic)
                .containsEntry("settle.input.REAL_TOPIC", payments)
                .containsEntry(DeadLetterProperties.STAGE, "handler");

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();

        assertThat(settle.out()).contains("1 replayed, 0 parked").contains("0 refused");
        // The input, then its copy sent back.
        List<Message<byte[]>> back = replay.all(topic);
        assertThat(back)
                .hasSize(2)
                .allSatisfy(message -> assertThat(ReplayTopics.text(message)).isEqualTo("pay me"));
        assertThat(back.get(1).getProperties())
                .containsEntry("approved-by", "finance")
                .containsEntry(DeadLetterProperties.REPLAY_COUNT, "1");
        assertThat(replay.sent(payments)).isZero();
        assertThat(replay.replayBacklog()).isZero();
    }

    @Test
    void lettersNamingAForeignTopicAreRefusedLeftUnacknowledgedAndPrintedEscapedClientWrittenOnesToo()
            throws Exception {
        String payments = topic + "-payments";
        // The client writes the letter of an ack timeout itself, and keeps the input's REAL_TOPIC (putIfAbsent).
        deadLettered(
                SubscriptionSpec.builder("orders", List.of(topic)).ackTimeout(Duration.ofSeconds(1)),
                delivery -> null,
                Map.of("plain", Map.of(), "forged on input", Map.of(DeadLetterProperties.REAL_TOPIC, payments)));
        assertThat(only(deadLetters, "forged on input").getProperties())
                .as("the client's own letter keeps the input's REAL_TOPIC")
                .containsEntry(DeadLetterProperties.REAL_TOPIC, payments)
                .doesNotContainKey(DeadLetterProperties.STAGE);
        // Crafted on the dead-letter topic itself: one naming another topic with a terminal escape, one the parking
        // topic, both replayed too often already (a refused letter is never parked).
        try (Producer<String> producer = client.newProducer(Schema.STRING)
                .topic(deadLetters)
                .enableBatching(false)
                .create()) {
            producer.newMessage()
                    .value("crafted")
                    .properties(Map.of(
                            DeadLetterProperties.REAL_TOPIC, payments + "\u001b[2J",
                            DeadLetterProperties.STAGE, "handler",
                            DeadLetterProperties.REPLAY_COUNT, "7"))
                    .send();
            producer.newMessage()
                    .value("to parking")
                    .properties(Map.of(
                            DeadLetterProperties.REAL_TOPIC,
                            deadLetters + "-parked",
                            DeadLetterProperties.STAGE,
                            "handler"))
                    .send();
        }

        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders", "--dry-run"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out())
                .contains("3 would be refused")
                .contains(payments + "\\u001b[2J")
                .doesNotContain("\u001b");
        assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                .as(settle.err())
                .isZero();

        assertThat(settle.out())
                .contains("1 replayed, 0 parked")
                .contains("3 refused: REAL_TOPIC is not a topic of the subscription")
                .contains("is not a topic subscription 'orders' consumes")
                .contains("is a dead-letter or parking topic of the manifest")
                .doesNotContain("\u001b");
        // The two inputs, then the plain one's copy sent back: nothing else reached the topic.
        assertThat(replay.all(topic).stream().map(ReplayTopics::text))
                .containsExactlyInAnyOrder("plain", "forged on input", "plain");
        assertThat(replay.sent(payments)).isZero();
        assertThat(replay.sent(deadLetters + "-parked")).isZero();
        // Left unacknowledged: the next run, or a fresh subscription, sees all three again.
        assertThat(replay.replayBacklog()).isEqualTo(3);
    }
}
