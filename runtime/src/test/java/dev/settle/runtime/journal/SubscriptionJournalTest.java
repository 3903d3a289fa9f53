package dev.settle.runtime.journal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.deadletter.Origin;
import dev.settle.runtime.driver.JournalFixtures;
import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.Topics;
import dev.settle.runtime.time.ManualTime;
import dev.settle.runtime.time.Time;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.junit.jupiter.api.Test;

class SubscriptionJournalTest {
    private final ManualTime time = new ManualTime(0, 1_700_000_000_000L);
    private final JournalWriterTest.FakeSink sink = new JournalWriterTest.FakeSink();
    private final JournalWriter writer = new JournalWriter("t", sink, time, 8);

    static Message<?> message(Map<String, String> properties, String payload) {
        MessageId id = MessageId.earliest;
        return (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getMessageId" -> id;
                    case "getTopicName" -> "persistent://public/default/orders";
                    case "hasKey" -> true;
                    case "getKey" -> "order-7";
                    case "getProperties" -> properties;
                    case "getProperty" -> properties.get((String) args[0]);
                    case "getData" -> payload.getBytes(StandardCharsets.UTF_8);
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void aRecordKeepsTheCauseClassAndThePayloadsHashButNeitherThePayloadNorTheMessage() {
        SubscriptionJournal journal = new SubscriptionJournal("orders", Optional.empty(), writer, time, "pod-a");
        UnitOfWork<Message<?>> work = JournalFixtures.failed(
                message(Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"), "card 4111"),
                2,
                new IllegalStateException("card 4111 declined"));

        journal.settled(work, Settled.ERROR, "com.acme.Orders (generation 3, sha256 abc)", 2_500_000, false);
        time.advance(Duration.ofMillis(100));

        JournalRecord record = sink.stored.get(0);
        assertThat(record.attempt()).isEqualTo(2);
        assertThat(record.generation()).isEqualTo(3);
        assertThat(record.instance()).isEqualTo("pod-a");
        assertThat(record.outcome()).isEqualTo("error");
        assertThat(record.failureStage()).isEqualTo("handler");
        assertThat(record.causeClass()).isEqualTo("java.lang.IllegalStateException");
        assertThat(record.handlingMicros()).isEqualTo(2_500);
        assertThat(record.traceId()).isEqualTo("0af7651916cd43dd8448eb211c80319c");
        assertThat(record.key()).isEqualTo("order-7");
        assertThat(record.origin()).isEqualTo("persistent://public/default/orders@" + MessageId.earliest);
        assertThat(record.payloadSha256())
                .isEqualTo(SubscriptionJournal.sha256("card 4111".getBytes(StandardCharsets.UTF_8)));
        assertThat(record.at()).isEqualTo(1_700_000_000_100L - 100);
        assertThat(record.properties().values()).noneMatch(value -> value.contains("4111"));
    }

    @Test
    void aCallsBeginningIsRecordedWithItsAttemptGenerationAndPodButNoFailureTimingNorPayloadHash() {
        SubscriptionJournal journal = new SubscriptionJournal("orders", Optional.empty(), writer, time, "pod-a", true);
        UnitOfWork<Message<?>> work = JournalFixtures.failed(message(Map.of(), "card 4111"), 2, new RuntimeException());

        journal.handling(work, "com.acme.Orders (generation 3, sha256 abc)");
        journal.settled(work, Settled.ERROR, "com.acme.Orders (generation 3, sha256 abc)", 2_500_000, false);
        time.advance(Duration.ofMillis(100));

        assertThat(journal.perHandling()).isTrue();
        assertThat(sink.stored).extracting(JournalRecord::outcome).containsExactly("handling", "error");
        JournalRecord began = sink.stored.get(0);
        assertThat(began.attempt()).isEqualTo(2);
        assertThat(began.generation()).isEqualTo(3);
        assertThat(began.instance()).isEqualTo("pod-a");
        assertThat(began.key()).isEqualTo("order-7");
        assertThat(began.failureStage()).isNull();
        assertThat(began.causeClass()).isNull();
        assertThat(began.handlingMicros()).isZero();
        assertThat(began.payloadSha256()).isNull();
        assertThat(sink.stored.get(1).payloadSha256())
                .isEqualTo(SubscriptionJournal.sha256("card 4111".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void byDefaultASubscriptionsJournalKeepsOneRecordPerSettlement() {
        assertThat(new SubscriptionJournal("orders", Optional.empty(), writer, time).perHandling())
                .isFalse();
    }

    @Test
    void thePayloadsHashIsReadWhereTheClientHoldsItDirectOrOnTheHeap() {
        byte[] payload = "order 7: 3 items".getBytes(StandardCharsets.UTF_8);
        java.nio.ByteBuffer direct =
                java.nio.ByteBuffer.allocateDirect(payload.length).put(payload).flip();
        Message<?> off = org.apache.pulsar.client.impl.MessageImpl.create(
                new org.apache.pulsar.common.api.proto.MessageMetadata(),
                direct,
                org.apache.pulsar.client.api.Schema.BYTES,
                "persistent://public/default/orders");
        Message<?> on = org.apache.pulsar.client.impl.MessageImpl.create(
                new org.apache.pulsar.common.api.proto.MessageMetadata(),
                java.nio.ByteBuffer.wrap(payload),
                org.apache.pulsar.client.api.Schema.BYTES,
                "persistent://public/default/orders");
        String expected = SubscriptionJournal.sha256(payload);

        for (Message<?> message : List.of(off, on, message(Map.of(), "order 7: 3 items"))) {
            byte[] digest = new byte[32];
            SubscriptionJournal.payloadSha256(Draft.sha256(), message, digest);
            assertThat(JournalBatch.hex(digest, 0, 32)).isEqualTo(expected);
        }
    }

    @Test
    void aLastAttemptThatAsksForTheMessageAgainIsRecordedDeadLetteredWithItsTopic() {
        SubscriptionJournal journal = new SubscriptionJournal(
                "orders", Optional.of(new DeadLetter(3, "orders-dlq", Optional.empty())), writer, time, "pod-a");

        journal.settled(
                JournalFixtures.failed(message(Map.of(), "x"), 3, new RuntimeException()),
                Settled.ERROR,
                "c",
                0,
                false);
        journal.settled(
                JournalFixtures.failed(message(Map.of(), "x"), 2, new RuntimeException()),
                Settled.ERROR,
                "c",
                0,
                false);
        time.advance(Duration.ofMillis(100));

        assertThat(sink.stored).extracting(JournalRecord::outcome).containsExactly("dead_lettered", "error");
        assertThat(sink.stored.get(0).deadLetterTopic()).isEqualTo("orders-dlq");
    }

    @Test
    void aRecordIsStampedFromItsSettlementsClockReadingWithoutReadingTheWallClockItself() {
        AtomicInteger wallReads = new AtomicInteger();
        Time counting = new Time() {
            @Override
            public long nanoTime() {
                return time.nanoTime();
            }

            @Override
            public Scheduled schedule(Duration delay, Runnable task) {
                return time.schedule(delay, task);
            }

            @Override
            public long currentTimeMillis() {
                wallReads.incrementAndGet();
                return time.currentTimeMillis();
            }

            @Override
            public boolean await(BooleanSupplier condition, Duration timeout) throws InterruptedException {
                return time.await(condition, timeout);
            }
        };
        JournalWriter timed = new JournalWriter("t", sink, counting, 8);
        SubscriptionJournal journal = new SubscriptionJournal("orders", Optional.empty(), timed, counting, "pod-a");
        int readsBefore = wallReads.get();
        time.advance(Duration.ofMillis(40));

        // Settled 30 ms into the clock's reading 40 ms in (the driver timed it then and tells the journal).
        for (int i = 0; i < 3; i++) {
            journal.settled(
                    JournalFixtures.failed(message(Map.of(), "x"), 1, new RuntimeException()),
                    Settled.ACK,
                    "c",
                    0,
                    false,
                    time.nanoTime() - 10_000_000L);
        }

        assertThat(wallReads.get()).as("wall clock reads for three records").isEqualTo(readsBefore);
        time.advance(Duration.ofMillis(100));
        assertThat(sink.stored)
                .extracting(JournalRecord::at)
                .containsExactly(1_700_000_000_030L, 1_700_000_000_030L, 1_700_000_000_030L);
    }

    @Test
    void aReplayedLetterKeepsTheOriginItCarries() {
        SubscriptionJournal journal = new SubscriptionJournal("orders", Optional.empty(), writer, time, "pod-a");

        journal.settled(
                JournalFixtures.failed(
                        message(Map.of(Origin.PROPERTY, "persistent://public/default/orders@9:1:-1"), "x"),
                        1,
                        new RuntimeException()),
                Settled.ACK,
                "c",
                0,
                false);
        time.advance(Duration.ofMillis(100));

        assertThat(sink.stored.get(0).origin()).isEqualTo("persistent://public/default/orders@9:1:-1");
    }

    @Test
    void thePayloadsSha256IsLowerCaseHex() {
        assertThat(SubscriptionJournal.sha256("abc".getBytes(java.nio.charset.StandardCharsets.US_ASCII)))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThat(SubscriptionJournal.sha256(null))
                .isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    @Test
    void aRecordReadsBackFromItsProperties() {
        JournalRecord record = JournalWriterTest.record(4);
        assertThat(JournalRecord.from(record.properties())).contains(record);
        assertThat(JournalRecord.from(Map.of("at", "1"))).isEmpty();
    }

    @Test
    void theJournalTopicDefaultsToTheNamespaceOfTheFirstTopic() {
        assertThat(Topics.named(List.of("persistent://acme/orders/in", "persistent://other/ns/in"))
                        .defaultJournalTopic())
                .isEqualTo("persistent://acme/orders/settle-journal");
        assertThat(Topics.matching("persistent://acme/orders/in-.*").defaultJournalTopic())
                .isEqualTo("persistent://acme/orders/settle-journal");
        assertThat(Topics.named(List.of("non-persistent://acme/orders/in")).defaultJournalTopic())
                .isEqualTo("persistent://acme/orders/settle-journal");
    }
}
