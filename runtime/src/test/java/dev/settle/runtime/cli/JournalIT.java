package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.as;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.driver.DriverWiring;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.journal.JournalBatch;
import dev.settle.runtime.journal.JournalRecord;
import dev.settle.runtime.journal.JournalWriter;
import dev.settle.runtime.journal.Journals;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.time.ManualTime;
import dev.settle.runtime.time.SystemTime;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.RetentionPolicies;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The settlement journal on the real broker (docs/trace.md): {@code settle trace} tells a message's story across
 * generations, its dead letter and its replay; a journal topic that cannot be written delays and fails nothing.
 */
class JournalIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final SettleCommand settle = new SettleCommand();

    private PulsarClient client;
    private String topic;
    private String deadLetters;
    private String journal;
    private Path manifest;

    @BeforeEach
    void connect(@TempDir Path folder) {
        client = pulsar.client();
        topic = pulsar.topic("journaled");
        deadLetters = topic + "-dlq";
        journal = topic + "-journal";
        manifest = pulsar.manifest()
                .subscription("orders", topic)
                .jar("not-built-yet.jar")
                .deadLetter(2, deadLetters)
                .set("journal", true)
                .set("journalTopic", journal)
                .writeTo(folder.resolve("settle.yaml"));
    }

    private SubscriptionSpec spec(String journalTopic) {
        return SubscriptionSpec.builder("orders", List.of(topic))
                .deadLetter(2, deadLetters)
                .failureBackoff(Optional.empty())
                .journal(Optional.of(journalTopic))
                .build();
    }

    private SubscriptionDriver start(
            SubscriptionSpec spec, Handler<String> handler, String code, Journals journals, SystemTime time) {
        SdkHandlerPort port = SdkHandlerPort.of(handler, String.class, spec).named(code);
        SubscriptionDriver driver = SubscriptionDriver.start(
                client,
                spec,
                port,
                port.schema(),
                time,
                new SettleMetrics().forSubscription("orders"),
                DriverWiring.NONE.withJournal(journals.forSubscription(spec)));
        await().atMost(Duration.ofSeconds(90)).until(driver::isConnected);
        return driver;
    }

    private MessageId publish(String value) throws Exception {
        try (Producer<String> producer = client.newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            return producer.newMessage().key("order-7").value(value).send();
        }
    }

    @Test
    void aMessageFailedTwiceDeadLetteredReplayedAndAcknowledgedIsToldStepByStepEndingAcknowledgedAfterReplay()
            throws Exception {
        AtomicInteger acknowledged = new AtomicInteger();
        Handler<String> failing = delivery -> {
            throw new IllegalStateException("card 4111 declined");
        };
        Handler<String> fixed = delivery -> {
            acknowledged.incrementAndGet();
            return Outcome.ack();
        };
        SubscriptionSpec spec = spec(journal);
        MessageId id;
        try (SystemTime time = new SystemTime();
                Journals journals = Journals.of(client, time)) {
            SubscriptionDriver first = start(spec, failing, "com.acme.Orders (generation 1)", journals, time);
            try {
                id = publish("card 4111");
                await().atMost(Duration.ofSeconds(90))
                        .until(() -> settle.run("dlq", "list", manifest.toString(), "orders") == 0
                                && settle.out().contains("1 dead letters"));
            } finally {
                first.stop(Duration.ofSeconds(5));
            }
            assertThat(settle.run("dlq", "replay", manifest.toString(), "orders"))
                    .as(settle.err())
                    .isZero();
            SubscriptionDriver second = start(spec, fixed, "com.acme.Orders (generation 2)", journals, time);
            try {
                await().atMost(Duration.ofSeconds(90)).until(() -> acknowledged.get() == 1);
                JournalWriter writer = journals.writers().get(journal);
                await().atMost(Duration.ofSeconds(30)).until(() -> writer.written() == 3);
                assertThat(writer.dropped()).isZero();
            } finally {
                second.stop(Duration.ofSeconds(5));
            }
        }

        assertThat(settle.run("trace", manifest.toString(), "orders", id.toString()))
                .as(settle.err())
                .isZero();

        String instance = DeadLetterProperties.instance();
        List<String> lines = settle.out().lines().toList();
        assertThat(lines.get(0)).isEqualTo("message " + topic + "@" + id);
        assertThat(lines.subList(1, lines.size()))
                .satisfiesExactly(
                        line -> assertThat(line)
                                .contains(instance + "  generation 1  attempt 1  error (handler:"
                                        + " java.lang.IllegalStateException)  " + id),
                        line -> assertThat(line)
                                .contains(instance + "  generation 1  attempt 2  dead_lettered to " + deadLetters
                                        + " (handler: java.lang.IllegalStateException)  " + id),
                        line -> assertThat(line).contains("dead letter stored in " + deadLetters),
                        line -> assertThat(line).contains("replayed to " + topic + " as "),
                        line -> assertThat(line).contains(instance + "  generation 2  attempt 1  ack  "),
                        line -> assertThat(line).isEqualTo("  acknowledged after replay"));
        // The exception's message (and so the card number) is nowhere in the story.
        assertThat(settle.out()).doesNotContain("4111");

        assertThat(settle.run("trace", manifest.toString(), "orders", "--key", "order-7", "--json"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out().strip())
                .startsWith("{\"origin\":\"" + topic + "@" + id + "\",\"steps\":[")
                .contains("\"settle.journal\":\"4\"")
                .endsWith("\"disposition\":\"acknowledged after replay\"}");
        // Nothing was parked: reading the story made no parking topic (a reader would have, by auto-creation).
        assertThat(pulsar.admin().topics().getList("public/default"))
                .contains(deadLetters)
                .doesNotContain(deadLetters + "-parked");

        // From --since ago, never from the topic's start: once the story's last record is 2 s old, a trace of the last
        // second finds none of it.
        Waits.pause(Duration.ofSeconds(2), "the story's records older than --since 1s");
        assertThat(settle.run("trace", manifest.toString(), "orders", id.toString(), "--since", "1s"))
                .as(settle.out() + settle.err())
                .isEqualTo(3);
        assertThat(settle.err()).contains("no journal record in ").contains("; try a longer --since");
    }

    @Test
    void aFlushSendsItsRecordsAsOneJournalMessageThatTraceReads() throws Exception {
        // The journal's timer is a manual one: every settlement is queued before the one flush, whose records must go
        // as one message (one message per record cost the consumer twice its CPU per message, docs/benchmarks.md).
        AtomicInteger handled = new AtomicInteger();
        Handler<String> acking = delivery -> {
            handled.incrementAndGet();
            return Outcome.ack();
        };
        int messages = 200;
        SubscriptionSpec spec = spec(journal);
        ManualTime journalTime = new ManualTime(0, System.currentTimeMillis());
        try (SystemTime time = new SystemTime();
                Journals journals = Journals.of(client, journalTime)) {
            journals.forSubscription(spec); // makes the topic's writer, which the driver shares
            JournalWriter writer = journals.writers().get(journal);
            // The journal's producer is made in the background, and a flush before it exists loses its records:
            // another subscription's records are flushed until one is written.
            await().atMost(Duration.ofSeconds(60)).until(() -> {
                writer.offer(new JournalRecord(
                        1,
                        "warm-up",
                        topic,
                        "1:1:-1",
                        topic + "@1:1:-1",
                        null,
                        1,
                        null,
                        0,
                        null,
                        "ack",
                        null,
                        null,
                        null,
                        0,
                        null,
                        null,
                        null));
                journalTime.advance(Duration.ofMillis(100));
                return writer.written() > 0;
            });
            long before = writer.written();
            long droppedBefore = writer.dropped();
            SubscriptionDriver driver = start(spec, acking, "com.acme.Orders", journals, time);
            try (Producer<String> producer = client.newProducer(Schema.STRING)
                    .topic(topic)
                    .enableBatching(false)
                    .create()) {
                for (int i = 0; i < messages; i++) {
                    producer.newMessage().key("order-" + i).value("m-" + i).sendAsync();
                }
                producer.flush();
                await().atMost(Duration.ofSeconds(60)).until(() -> handled.get() == messages);
                journalTime.advance(Duration.ofMillis(100));
                await().atMost(Duration.ofSeconds(30)).until(() -> writer.written() - before >= messages);
                assertThat(writer.dropped()).isEqualTo(droppedBefore);
            } finally {
                driver.stop(Duration.ofSeconds(5));
            }
        }

        List<Integer> ordersMessages = new ArrayList<>();
        try (Reader<byte[]> reader = client.newReader(Schema.BYTES)
                .topic(journal)
                .startMessageId(MessageId.earliest)
                .create()) {
            while (reader.hasMessageAvailable()) {
                Message<byte[]> m = reader.readNext(30, TimeUnit.SECONDS);
                List<JournalRecord> records = JournalBatch.read(m.getProperties(), m.getData());
                if (records.stream().anyMatch(r -> r.subscription().equals("orders"))) {
                    assertThat(m.getProperty("settle.journal")).isEqualTo("4");
                    ordersMessages.add(records.size());
                }
            }
        }
        assertThat(ordersMessages).as("the records in each journal message").containsExactly(messages);

        assertThat(settle.run("trace", manifest.toString(), "orders", "--key", "order-117"))
                .as(settle.err())
                .isZero();
        assertThat(settle.out()).contains("attempt 1  ack").contains("  acknowledged");
    }

    @Test
    void settleTracePrintsTheStoryAloneWithoutThePulsarClientsLogLines() throws Exception {
        try (SystemTime time = new SystemTime();
                Journals journals = Journals.of(client, time)) {
            journals.forSubscription(spec(journal));
            JournalWriter writer = journals.writers().get(journal);
            // The producer is made in the background: records offered before it exists are lost, so offer until one is
            // written.
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        writer.offer(new JournalRecord(
                                System.currentTimeMillis(),
                                "orders",
                                topic,
                                "5:7:-1",
                                topic + "@5:7:-1",
                                "order-9",
                                1,
                                "com.acme.Orders",
                                0,
                                "orders-7d9f8c-x2x4q",
                                "ack",
                                null,
                                null,
                                null,
                                120,
                                null,
                                null,
                                null));
                        return writer.written() > 0;
                    });
        }

        // As a terminal runs it: its own process, output and log on the one console. The trace reads the journal from
        // --since (a seek) and asks for the dead-letter and parking topics, which do not exist: each made the client
        // log a warning into the story.
        try (SettleProcess trace =
                SettleProcess.command("trace", "trace", manifest.toString(), "orders", "--key", "order-9")) {
            assertThat(trace.exitsWithin(120)).as("settle trace ended").isTrue();
            assertThat(trace.process.exitValue())
                    .as(String.join("\n", trace.output))
                    .isZero();
            List<String> output = List.copyOf(trace.output);
            assertThat(output).first().isEqualTo("message " + topic + "@5:7:-1");
            assertThat(output.subList(1, output.size()))
                    .as("the story's steps and disposition, each indented, and nothing else")
                    .isNotEmpty()
                    .allSatisfy(line -> assertThat(line).startsWith("  "))
                    .anySatisfy(line ->
                            assertThat(line).contains("orders-7d9f8c-x2x4q").contains("attempt 1  ack"));
        }
    }

    @Test
    void aJournalTopicThatCannotBeWrittenNeitherDelaysNorFailsSettlement() throws Exception {
        // A tenant that does not exist: the producer can never be made, every record is lost, counted.
        SubscriptionSpec spec = spec("persistent://no-such-tenant-" + System.nanoTime() + "/ns/settle-journal");
        AtomicInteger handled = new AtomicInteger();
        Handler<String> acking = delivery -> {
            handled.incrementAndGet();
            return Outcome.ack();
        };
        int messages = 200;
        try (SystemTime time = new SystemTime();
                Journals journals = Journals.of(client, time)) {
            SubscriptionDriver driver = start(spec, acking, "com.acme.Orders", journals, time);
            try (Producer<String> producer = client.newProducer(Schema.STRING)
                    .topic(topic)
                    .enableBatching(false)
                    .create()) {
                long started = System.nanoTime();
                for (int i = 0; i < messages; i++) {
                    producer.newMessage().value("m-" + i).sendAsync();
                }
                producer.flush();
                // Generous for a shared machine (a healthy run settles 200 messages in well under a second).
                await().atMost(Duration.ofSeconds(30)).until(() -> handled.get() == messages);
                long settledMillis = (System.nanoTime() - started) / 1_000_000;
                JournalWriter writer = journals.writers().values().iterator().next();
                await().atMost(Duration.ofSeconds(30)).until(() -> writer.dropped() == messages);
                assertThat(writer.written()).isZero();
                assertThat(handled.get())
                        .as("each settled once, in %d ms", settledMillis)
                        .isEqualTo(messages);
                // Nothing failed: no message came back, none was dead-lettered.
                assertThat(driver.loopFailure()).isEmpty();
            } finally {
                driver.stop(Duration.ofSeconds(5));
            }
        }
        assertThat(settle.run("dlq", "list", manifest.toString(), "orders")).isZero();
        assertThat(settle.out()).contains("0 dead letters");
    }

    @Test
    void preflightWarnsWhenTheJournalTopicKeepsItsRecordsLessThanTheDayTraceReads(@TempDir Path folder)
            throws Exception {
        String namespace = "public/journal-retention-" + System.nanoTime();
        String journalTopic = "persistent://" + namespace + "/settle-journal";
        Path checked = pulsar.manifest()
                .adminUrl(pulsar.endpoints().adminUrl())
                .subscription("orders", topic)
                .jar("not-built-yet.jar")
                .set("journal", true)
                .set("journalTopic", journalTopic)
                .writeTo(folder.resolve("preflight.yaml"));
        PulsarAdmin admin = pulsar.admin();
        admin.namespaces().createNamespace(namespace);
        admin.namespaces().setRetention(namespace, new RetentionPolicies(10, 100));

        settle.run("preflight", checked.toString());
        assertThat(settle.out().lines().filter(line -> line.startsWith("orders  journal-retention  ")))
                .as(settle.out() + settle.err())
                .singleElement(as(InstanceOfAssertFactories.STRING))
                .contains("failed (warning): " + journalTopic + " keeps its records 10 min")
                .contains("the namespace's retention", "set-retention " + namespace + " --time 24h");

        admin.namespaces().setRetention(namespace, new RetentionPolicies(48 * 60, 1024));
        settle.run("preflight", checked.toString());
        assertThat(settle.out().lines().filter(line -> line.startsWith("orders  journal-retention  ")))
                .as(settle.out() + settle.err())
                .singleElement(as(InstanceOfAssertFactories.STRING))
                .contains("ok: " + journalTopic + " keeps its records 2880 min up to 1024 MB");
    }
}
