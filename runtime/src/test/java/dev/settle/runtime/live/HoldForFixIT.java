package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.manifest.HoldForFix;
import dev.settle.testbroker.PulsarFixture;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;

/**
 * {@code onCap: hold} on a real broker, with generations uploaded through the admin API (issue 45, "Hold for a fix":
 * 10 000 messages of which 500 fail, scaled here to 1 000 and 50 to keep the build's time, the proportion the issue's;
 * {@code -Dsettle.holdforfix.messages=10000} runs the numbers): generation 1 holds the 50 it fails,
 * dead-letters none and acknowledges the other 950; generation 2, which handles them, gets all 50 back in key order
 * within 30 s and the held topic is empty after; a message generation 2
 * holds that generation 3 fails too goes to the dead-letter topic with both causes.
 */
class HoldForFixIT extends LiveCodeHarness {
    private static final int MESSAGES = Integer.getInteger("settle.holdforfix.messages", 1_000);
    /** The messages generation 1 fails (every 20th) and the others. */
    private static final int FAILING = MESSAGES / 20;

    private static final int PASSING = MESSAGES - FAILING;
    private static final int KEYS = 10;

    /** Every 20th message fails in generation 1: 50 of 1 000 by default. */
    private static String value(int i) {
        return (i % 20 == 7 ? "fail-" : "ok-") + i + "-k" + (i % KEYS);
    }

    /**
     * A String handler labelled {@code label} that records each call and throws {@code exception} on values starting
     * with one of {@code failing}.
     */
    Path handler(String name, String label, String exception, String... failing) {
        String test = failing.length == 0
                ? "false"
                : java.util.Arrays.stream(failing)
                        .map(prefix -> "delivery.value().startsWith(\"" + prefix + "\")")
                        .collect(Collectors.joining(" || "));
        return TestJar.at(folder.resolve(name))
                .source("test.Fixable", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.util.function.BiConsumer;
                        public class Fixable implements Handler<String> {
                            @SuppressWarnings("unchecked")
                            private final BiConsumer<String, String> sink =
                                    (BiConsumer<String, String>) System.getProperties().get("%s");
                            @Override public Outcome handle(Delivery<String> delivery) {
                                sink.accept(delivery.value(), "%s|" + delivery.attempt());
                                if (%s) {
                                    throw new %s("%s cannot handle " + delivery.value());
                                }
                                return Outcome.ack();
                            }
                        }
                        """.formatted(sinkProperty, label, test, exception, label))
                .services("test.Fixable")
                .build();
    }

    /** This test's subscription: its own held topic, which a broker kept across runs shares with nobody. */
    private final String subscription = PulsarFixture.unique("hold");

    private HttpResponse<String> upload(Settle settle, byte[] jar) throws Exception {
        return request(settle, "PUT", "/v1/subscriptions/" + subscription + "/jar", jar, TOKEN);
    }

    private Path holdingManifest(String topic, String onCap) {
        return liveManifest("")
                .subscription(subscription, topic)
                .jar("manifest.jar")
                .set("concurrency", 4)
                .deadLetter(3, topic + "-dlq")
                .set("failureBackoff", "{initial: 10ms, multiplier: 1, max: 10ms}")
                .set("onCap", onCap)
                .writeTo(folder.resolve("settle.yaml"));
    }

    @Test
    void messagesHeldByOneGenerationAreHandledByTheNextAndOnesTheNextFailsTooAreDeadLetteredWithBothCauses()
            throws Exception {
        String topic = topic("hold");
        String heldTopic = HoldForFix.topicFor(topic + "-dlq", subscription);
        handler("manifest.jar", "gen1", "IllegalStateException", "fail-");
        byte[] fixed = bytes(handler("gen2.jar", "gen2", "IllegalStateException", "also-"));
        byte[] stillFailing = bytes(handler("gen3.jar", "gen3", "ArithmeticException", "also-"));
        Path manifest = holdingManifest(topic, "hold");
        Settle settle = start(manifest);

        try (Producer<String> producer = producer(topic)) {
            List<CompletableFuture<?>> sends = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                sends.add(producer.newMessage()
                        .key("k" + (i % KEYS))
                        .value(value(i))
                        .sendAsync());
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

            // Generation 1: 950 acknowledged, 50 held after their three attempts, none dead-lettered.
            await(
                    () -> count(heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION) == FAILING,
                    Duration.ofSeconds(120),
                    () -> "held " + count(heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION) + "; " + handled.size()
                            + " calls");
            pulsar.awaitBacklog(topic, subscription, 0, Duration.ofSeconds(60));
            assertThat(handled.stream()
                            .filter(h -> h.label().equals("gen1") && h.value().startsWith("ok-"))
                            .map(Handled::value)
                            .distinct()
                            .count())
                    .isEqualTo(PASSING);
            // Each failing message had its attempts 1, 2 and 3 and none after (the cap), and was held once. A call
            // may repeat an attempt number already seen: the broker now and then dispatches one entry twice with one
            // redelivery count (docs/pulsar-client-notes.md), and a copy whose twin was retried is handed over, as
            // at-least-once allows. A full build saw one (151 calls for 150 attempts); they are counted and printed.
            Map<String, List<Integer>> attemptsOf = handled.stream()
                    .filter(h -> h.value().startsWith("fail-"))
                    .collect(Collectors.groupingBy(
                            Handled::value, Collectors.mapping(Handled::attempt, Collectors.toList())));
            assertThat(attemptsOf).hasSize(FAILING);
            attemptsOf.forEach((value, attempts) -> assertThat(new TreeSet<>(attempts))
                    .as("the attempts of %s: %s", value, attempts)
                    .containsExactly(1, 2, 3));
            long repeats = attemptsOf.values().stream().mapToLong(List::size).sum() - 3L * FAILING;
            System.out.printf(
                    "hold for a fix: %d calls of a failing message repeated an attempt%s%n",
                    repeats,
                    attemptsOf.entrySet().stream()
                            .filter(e -> e.getValue().size() > 3)
                            .map(e -> " " + e.getKey() + " " + e.getValue())
                            .collect(Collectors.joining(",")));
            assertThat(count(heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION))
                    .as("each held once")
                    .isEqualTo(FAILING);
            assertThat(count(topic + "-dlq", subscription + "-dlq"))
                    .as("dead letters")
                    .isZero();
            assertThat(scrape(settle))
                    .contains("settle_held_for_fix_total{generation=\"1\",subscription=\"" + subscription + "\"} "
                            + FAILING + ".0");

            // settle held reads them without taking them.
            String list = Cli.out("held", "list", manifest.toString(), subscription);
            assertThat(list)
                    .contains(FAILING + " held messages")
                    .containsPattern(FAILING + "  1 \\([0-9a-f]{12}\\)  handler  " + "java.lang.IllegalStateException");
            assertThat(Cli.out("held", "drain", manifest.toString(), subscription, "--dry-run"))
                    .contains(FAILING + " would be sent back, 0 refused");

            // Generation 2 fixes them: all 50 come back and are handled by it, each key in its order.
            long deployed = System.nanoTime();
            HttpResponse<String> two = upload(settle, fixed);
            assertThat(two.statusCode()).as(two.body()).isEqualTo(200);
            await(
                    () -> handledBy("gen2", "fail-").size() == FAILING,
                    Duration.ofSeconds(30),
                    () -> handledBy("gen2", "fail-").size() + " of " + FAILING + " handled by generation 2");
            double seconds = (System.nanoTime() - deployed) / 1e9;
            List<String> byGeneration2 = handledBy("gen2", "fail-");
            for (int key = 0; key < KEYS; key++) {
                String suffix = "-k" + key;
                List<String> ofKey =
                        byGeneration2.stream().filter(v -> v.endsWith(suffix)).toList();
                List<String> published = new ArrayList<>();
                for (int i = 0; i < MESSAGES; i++) {
                    if (value(i).startsWith("fail-") && value(i).endsWith(suffix)) {
                        published.add(value(i));
                    }
                }
                assertThat(ofKey)
                        .as("key k" + key + " in the order it was published")
                        .isEqualTo(published);
            }
            pulsar.awaitBacklog(heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION, 0, Duration.ofSeconds(30));
            assertThat(count(topic + "-dlq", subscription + "-dlq"))
                    .as("dead letters")
                    .isZero();
            assertThat(scrape(settle))
                    .contains("settle_redriven_total{subscription=\"" + subscription + "\"} " + FAILING + ".0");
            System.out.printf(
                    "hold for a fix: %d held by generation 1 of %d handled by generation 2 %.1f s after its"
                            + " upload, in key order%n",
                    FAILING, MESSAGES, seconds);

            // A message generation 2 holds, which generation 3 fails too: dead-lettered with both causes.
            producer.newMessage()
                    .key("k1")
                    .property("tenant", "acme")
                    .eventTime(1_700_000_000_000L)
                    .value("also-1-k1")
                    .send();
            await(() -> count(heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION) == 1, Duration.ofSeconds(60));
            HttpResponse<String> three = upload(settle, stillFailing);
            assertThat(three.statusCode()).as(three.body()).isEqualTo(200);
            await(
                    () -> count(topic + "-dlq", subscription + "-dlq") == 1,
                    Duration.ofSeconds(60),
                    () -> "dead letters " + count(topic + "-dlq", subscription + "-dlq") + ", "
                            + handledBy("gen3", "also-"));
            Map<String, String> letter = deadLetter(topic + "-dlq");
            assertThat(letter)
                    .containsEntry(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.ArithmeticException")
                    .containsEntry(DeadLetterProperties.HELD_EXCEPTION_CLASS, "java.lang.IllegalStateException")
                    .containsEntry(DeadLetterProperties.HELD_GENERATION, "2")
                    .containsEntry(DeadLetterProperties.HELD_STAGE, "handler")
                    .containsEntry("tenant", "acme")
                    .containsKey(DeadLetterProperties.INPUT_PREFIX + "settle.origin");
            assertThat(handled.stream()
                            .filter(h -> h.label().equals("gen3") && h.value().equals("also-1-k1")))
                    .as("generation 3's three attempts")
                    .hasSize(3);
            assertThat(count(heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION))
                    .as("held again")
                    .isZero();
        }
    }

    @Test
    void atExactlyOnceTheHeldMessagesOutputsAreEachReadOnceAfterTheRedrive() throws Exception {
        String topic = topic("hold-eo");
        String output = topic + "-out";
        String heldTopic = HoldForFix.topicFor(topic + "-dlq", subscription);
        publishing("manifest.jar", "gen1", output, "delivery.value().startsWith(\"fail-\")");
        byte[] fixed = bytes(publishing("gen2.jar", "gen2", output, "false"));
        Path manifest = holdingManifest(topic, "hold");
        Files.writeString(manifest, Files.readString(manifest) + """
                    guarantee: exactly-once
                    commitBatch: {maxDeliveries: 1}
                """);
        Settle settle = start(manifest);
        int messages = 200;

        try (Producer<String> producer = producer(topic)) {
            for (int i = 0; i < messages; i++) {
                producer.newMessage().key("k" + (i % KEYS)).value(value(i)).sendAsync();
            }
            producer.flush();
            // Counted by the metric: at exactly-once each held copy's transaction leaves a commit marker on the held
            // topic, which the broker's backlog counts as an entry too (20 for 10 held copies, measured).
            String held = "settle_held_for_fix_total{generation=\"1\",subscription=\"" + subscription + "\"} 10.0";
            await(
                    () -> scraped(settle).contains(held),
                    Duration.ofSeconds(120),
                    () -> "held backlog " + count(heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION) + ", " + handled.size()
                            + " calls");
            HttpResponse<String> two = upload(settle, fixed);
            assertThat(two.statusCode()).as(two.body()).isEqualTo(200);
            await(
                    () -> handledBy("gen2", "fail-").size() == 10,
                    Duration.ofSeconds(30),
                    () -> handledBy("gen2", "fail-").size() + " of 10 handled by generation 2");
        }

        Map<String, Integer> copies = pulsar.copies(output, messages);
        assertThat(copies).hasSize(messages);
        assertThat(PulsarFixture.duplicates(copies)).as("outputs read twice").isZero();
        assertThat(count(topic + "-dlq", subscription + "-dlq"))
                .as("dead letters")
                .isZero();
        pulsar.awaitBacklog(heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION, 0, Duration.ofSeconds(30));
    }

    private String scraped(Settle settle) {
        try {
            return scrape(settle);
        } catch (Exception e) {
            return "";
        }
    }

    /** The values {@code label} handled that start with {@code prefix}, in the order of their first call. */
    private List<String> handledBy(String label, String prefix) {
        return handled.stream()
                .filter(h -> h.label().equals(label) && h.value().startsWith(prefix))
                .map(Handled::value)
                .distinct()
                .toList();
    }

    /** The backlog of {@code subscription} on {@code topic}; 0 while neither exists (nothing was ever written). */
    private long count(String topic, String subscription) {
        try {
            var subscriptions = pulsar.admin().topics().getStats(topic).getSubscriptions();
            return subscriptions.containsKey(subscription)
                    ? subscriptions.get(subscription).getMsgBacklog()
                    : 0;
        } catch (PulsarAdminException.NotFoundException none) {
            return 0;
        } catch (PulsarAdminException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The one dead letter's properties, read from the start of the topic. */
    private Map<String, String> deadLetter(String topic) throws Exception {
        try (Consumer<byte[]> reader = pulsar.client()
                .newConsumer(Schema.BYTES)
                .topic(topic)
                .subscriptionName(PulsarFixture.unique("reader"))
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            Message<byte[]> letter = reader.receive(30, TimeUnit.SECONDS);
            assertThat(letter).as("a dead letter on " + topic).isNotNull();
            assertThat(letter.getKey()).isEqualTo("k1");
            assertThat(letter.getEventTime()).isEqualTo(1_700_000_000_000L);
            return new LinkedHashMap<>(letter.getProperties());
        }
    }
}
