package dev.settle.runtime.journal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JournalBatchTest {

    private static List<JournalRecord> records(int count) {
        List<JournalRecord> records = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            records.add(JournalWriterTest.record(i));
        }
        return records;
    }

    private static List<JournalRecord> readBack(List<JournalBatch> batches) {
        List<JournalRecord> read = new ArrayList<>();
        for (JournalBatch batch : batches) {
            read.addAll(JournalBatch.read(JournalBatch.properties(), batch.body()));
        }
        return read;
    }

    @Test
    void aFlushsRecordsGoAsOneMessageAndReadBackFieldForField() {
        JournalRecord full = new JournalRecord(
                1_733_360_000_123L,
                "orders",
                "persistent://public/default/orders",
                "4:0:-1",
                "persistent://public/default/orders@4:0:-1",
                "clé-7 \u001b[2J",
                3,
                "com.acme.Orders (generation 2)",
                2,
                "pod-a",
                "dead_lettered",
                "persistent://public/default/orders-dlq",
                "handler",
                "java.lang.IllegalStateException",
                Long.MAX_VALUE,
                "4bf92f3577b34da6a3ce929d0e0e4736",
                "ab12",
                "aborted");
        JournalRecord sparse = new JournalRecord(
                1L,
                "orders",
                "t",
                "1:2:-1",
                "t@1:2:-1",
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
                null);
        List<JournalRecord> records = new ArrayList<>(records(200));
        records.add(full);
        records.add(sparse);

        List<JournalBatch> batches = JournalBatch.of(records, JournalBatch.MAX_BODY_BYTES);

        assertThat(batches).hasSize(1);
        assertThat(batches.get(0).records()).isEqualTo(202);
        assertThat(batches.get(0).firstAt()).isEqualTo(records.get(0).at());
        assertThat(JournalBatch.properties()).containsEntry("settle.journal", "4");
        assertThat(readBack(batches)).containsExactlyElementsOf(records);
    }

    @Test
    void recordsPastTheBodyLimitGoInMoreMessagesInOrderNoneSplitEachReadOnItsOwn() {
        List<JournalRecord> records = records(300);

        List<JournalBatch> batches = JournalBatch.of(records, 2_000);

        assertThat(batches).hasSizeGreaterThan(2);
        assertThat(batches.subList(0, batches.size() - 1))
                .allSatisfy(b -> assertThat(b.body().length).isBetween(2_000, 2_000 + 300));
        assertThat(batches)
                .extracting(JournalBatch::records)
                .allSatisfy(n -> assertThat(n).isPositive());
        assertThat(readBack(batches)).containsExactlyElementsOf(records);
        assertThat(JournalBatch.of(List.of(), JournalBatch.MAX_BODY_BYTES)).isEmpty();
    }

    @Test
    void aRecordOfARepeatedSubscriptionTakesAFewBytesPastTheFirst() {
        int one =
                JournalBatch.of(records(1), JournalBatch.MAX_BODY_BYTES).get(0).body().length;
        int hundred = JournalBatch.of(records(100), JournalBatch.MAX_BODY_BYTES)
                .get(0)
                .body()
                .length;

        // Its name, topic, code, pod and outcome once a message; the origin a byte when it is topic@messageId.
        assertThat((hundred - one) / 99).isLessThan(one / 2);
    }

    @Test
    void anOriginOtherThanTheMessagesOwnIsKept() {
        JournalRecord replayed = new JournalRecord(
                1L,
                "orders",
                "t",
                "5:0:-1",
                "t@1:2:-1",
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
                null);

        assertThat(readBack(JournalBatch.of(List.of(replayed), JournalBatch.MAX_BODY_BYTES)))
                .containsExactly(replayed);
    }

    @Test
    void aJournalOfTheFirstFormatARecordAsPropertiesStillReads() {
        JournalRecord record = JournalWriterTest.record(4);

        assertThat(JournalBatch.read(record.properties(), new byte[0])).containsExactly(record);
    }

    @Test
    void anotherProducersMessageOrABodyThatDoesNotReadIsSkipped() {
        byte[] body =
                JournalBatch.of(records(3), JournalBatch.MAX_BODY_BYTES).get(0).body();

        assertThat(JournalBatch.read(Map.of(), body)).isEmpty();
        assertThat(JournalBatch.read(Map.of("settle.journal", "5"), body)).isEmpty();
        assertThat(JournalBatch.read(Map.of("settle.journal", "3"), body)).isEmpty();
        assertThat(JournalBatch.read(JournalBatch.properties(), null)).isEmpty();
        assertThat(JournalBatch.read(JournalBatch.properties(), "{\"at\":1}".getBytes(StandardCharsets.UTF_8)))
                .isEmpty();
        assertThat(JournalBatch.read(JournalBatch.properties(), Arrays.copyOf(body, body.length - 1)))
                .isEmpty();
        assertThat(JournalBatch.read(JournalBatch.properties(), Arrays.copyOf(body, body.length + 1)))
                .isEmpty();
    }

    /** What the runtime before version 3 wrote (JournalBatch at a8b2bef): a batched id, then a replayed letter's copy. */
    private static final String VERSION_2_BODY =
            "AAAAAgAAAZOUTpx7AAAABm9yZGVycwAAACJwZXJzaXN0ZW50Oi8vcHVibGljL2RlZmF1bHQvb3JkZXJz"
                    + "AAAACDQ6MDotMToyAAAAAANrLTcAAAADAAAAHmNvbS5hY21lLk9yZGVycyAoZ2VuZXJhdGlvbiAyKQAAAAIAAAAFcG9kLWEAAAAFZXJyb3L/"
                    + "////AAAAB2hhbmRsZXIAAAAfamF2YS5sYW5nLklsbGVnYWxTdGF0ZUV4Y2VwdGlvbgAAAAAAAASwAAAAIDRiZjkyZjM1NzdiMzRkYTZhM2Nl"
                    + "OTI5ZDBlMGU0NzM2AAAAQGJhNzgxNmJmOGYwMWNmZWE0MTQxNDBkZTVkYWUyMjIzYjAwMzYxYTM5NjE3N2E5Y2I0MTBmZjYxZjIwMDE1YWT/"
                    + "////AAABk5ROnMj////+/////QAAAAY5OjE6LTEBAAAAK3BlcnNpc3RlbnQ6Ly9wdWJsaWMvZGVmYXVsdC9vcmRlcnNANDowOi0xOjL/////"
                    + "AAAAAf////wAAAACAAAABXBvZC1iAAAAA2Fja////////////////wAAAAAAAABQ/////wAAAEBiYTc4MTZiZjhmMDFjZmVhNDE0MTQwZGU1"
                    + "ZGFlMjIyM2IwMDM2MWEzOTYxNzdhOWNiNDEwZmY2MWYyMDAxNWFk/////w==";

    private static final String SHA_OF_ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    private static JournalRecord failedFirst() {
        return new JournalRecord(
                1_733_360_000_123L,
                "orders",
                "persistent://public/default/orders",
                "4:0:-1:2",
                "persistent://public/default/orders@4:0:-1:2",
                "k-7",
                3,
                "com.acme.Orders (generation 2)",
                2,
                "pod-a",
                "error",
                null,
                "handler",
                "java.lang.IllegalStateException",
                1200,
                "4bf92f3577b34da6a3ce929d0e0e4736",
                SHA_OF_ABC,
                null);
    }

    private static JournalRecord replayedCopy() {
        return new JournalRecord(
                1_733_360_000_200L,
                "orders",
                "persistent://public/default/orders",
                "9:1:-1",
                "persistent://public/default/orders@4:0:-1:2",
                null,
                1,
                "com.acme.Orders (generation 2)",
                2,
                "pod-b",
                "ack",
                null,
                null,
                null,
                80,
                null,
                SHA_OF_ABC,
                null);
    }

    /** What the runtime before version 4 wrote (JournalBatch at bb7481a): the same two records, from drafts. */
    private static final String VERSION_3_BODY =
            "AAAAAgAAAZOUTpx7AAAABm9yZGVycwAAACJwZXJzaXN0ZW50Oi8vcHVibGljL2RlZmF1bHQvb3JkZXJzAwAAAAAAAAAEAAAAAAAA"
                    + "AAD/////AAAAAgAAAAADay03AAAAAwAAAB5jb20uYWNtZS5PcmRlcnMgKGdlbmVyYXRpb24gMikAAAACAAAABXBvZC1hAAAABWVy"
                    + "cm9y/////wAAAAdoYW5kbGVyAAAAH2phdmEubGFuZy5JbGxlZ2FsU3RhdGVFeGNlcHRpb24AAAAAAAAEsAAAACA0YmY5MmYzNTc3"
                    + "YjM0ZGE2YTNjZTkyOWQwZTBlNDczNgS6eBa/jwHP6kFBQN5driIjsANho5YXepy0EP9h8gAVrf////8AAAGTlE6cyP////7////9"
                    + "AgAAAAAAAAAJAAAAAAAAAAH/////AQAAACtwZXJzaXN0ZW50Oi8vcHVibGljL2RlZmF1bHQvb3JkZXJzQDQ6MDotMToy/////wAA"
                    + "AAH////8AAAAAgAAAAVwb2QtYgAAAANhY2v///////////////8AAAAAAAAAUP////8EungWv48Bz+pBQUDeXa4iI7ADYaOWF3qc"
                    + "tBD/YfIAFa3/////";

    @Test
    void aBodyOfVersion3WrittenByAnEarlierRuntimeStillReads() {
        byte[] body = java.util.Base64.getDecoder().decode(VERSION_3_BODY);

        assertThat(JournalBatch.read(Map.of("settle.journal", "3"), body))
                .containsExactly(failedFirst(), replayedCopy());
    }

    @Test
    void aBodyOfVersion2WrittenByAnEarlierRuntimeStillReads() {
        byte[] body = java.util.Base64.getDecoder().decode(VERSION_2_BODY);

        assertThat(JournalBatch.read(Map.of("settle.journal", "2"), body))
                .containsExactly(failedFirst(), replayedCopy());
    }

    private static Draft draft(JournalRecord r, org.apache.pulsar.client.api.MessageId id, boolean ownOrigin) {
        Draft d = new Draft();
        d.at = r.at();
        d.subscription = r.subscription();
        d.topic = r.topic();
        d.messageId = id;
        d.messageIdText = id.getClass() == org.apache.pulsar.client.impl.MessageIdImpl.class
                        || id.getClass() == org.apache.pulsar.client.impl.BatchMessageIdImpl.class
                ? null
                : id.toString();
        d.origin = ownOrigin ? null : r.origin();
        d.key = r.key();
        d.attempt = r.attempt();
        d.code = r.code();
        d.generation = r.generation();
        d.instance = r.instance();
        d.outcome = r.outcome();
        d.deadLetterTopic = r.deadLetterTopic();
        d.failureStage = r.failureStage();
        d.causeClass = r.causeClass();
        d.handlingMicros = r.handlingMicros();
        d.traceId = r.traceId();
        d.hasSha256 = r.payloadSha256() != null;
        if (d.hasSha256) {
            System.arraycopy(java.util.HexFormat.of().parseHex(r.payloadSha256()), 0, d.sha256, 0, 32);
        }
        d.transaction = r.transaction();
        return d;
    }

    @Test
    void aRecordEncodedOnTheMessagePathReadsBackWithItsIdAsPulsarPrintsItAndItsShaInHex() {
        var batched = new org.apache.pulsar.client.impl.BatchMessageIdImpl(4, 0, -1, 2);
        var plain = new org.apache.pulsar.client.impl.MessageIdImpl(9, 1, -1);
        var otherKind = org.apache.pulsar.client.api.TopicMessageId.create("persistent://public/default/orders", plain);
        JournalBatch.Body body = new JournalBatch.Body(64);

        body.write(draft(failedFirst(), batched, true));
        body.write(draft(replayedCopy(), plain, false));
        body.write(draft(replayedCopy(), otherKind, false));
        List<JournalRecord> read =
                JournalBatch.read(JournalBatch.properties(), body.done().body());

        assertThat(batched.toString()).isEqualTo("4:0:-1:2");
        assertThat(plain.toString()).isEqualTo("9:1:-1");
        assertThat(read).containsExactly(failedFirst(), replayedCopy(), replayedCopy());
    }

    @Test
    void aMessagePathRecordOfARepeatedSubscriptionTakesUnder60BytesWithoutATraceId() {
        JournalRecord acked = new JournalRecord(
                1_733_360_000_123L,
                "orders",
                "persistent://public/default/orders",
                "4:0:-1:2",
                "persistent://public/default/orders@4:0:-1:2",
                null,
                1,
                "com.acme.Orders",
                0,
                "pod-a",
                "ack",
                null,
                null,
                null,
                35,
                null,
                SHA_OF_ABC,
                null);
        JournalBatch.Body body = new JournalBatch.Body(64);
        body.write(draft(acked, new org.apache.pulsar.client.impl.BatchMessageIdImpl(4, 0, -1, 2), true));
        int first = body.size();
        JournalRecord next = new JournalRecord(
                acked.at() + 1,
                "orders",
                "persistent://public/default/orders",
                "4:1:-1:0",
                "persistent://public/default/orders@4:1:-1:0",
                null,
                1,
                "com.acme.Orders",
                0,
                "pod-a",
                "ack",
                null,
                null,
                null,
                35,
                null,
                SHA_OF_ABC,
                null);

        body.write(draft(next, new org.apache.pulsar.client.impl.BatchMessageIdImpl(4, 1, -1, 0), true));

        // The SHA-256 (33 bytes) and a byte or two for each other field: the time and the id as differences from the
        // record before, the repeated texts as their index (every byte is sent by the runtime and stored by the
        // broker).
        assertThat(body.size() - first).isLessThan(60);
        assertThat(JournalBatch.read(JournalBatch.properties(), body.done().body()))
                .containsExactly(acked, next);
    }

    @Test
    void numbersAtTheirLimitsAndTextsOutsideAsciiReadBack() {
        JournalRecord extreme = new JournalRecord(
                Long.MIN_VALUE,
                "órders",
                "persistent://public/default/orders",
                "9223372036854775807:-1:2147483647:-2147483648",
                "elsewhere@1:1:-1",
                "clé-7 \u001b[2J \ud83d\ude00",
                Integer.MAX_VALUE,
                "com.acme.Orders",
                Integer.MIN_VALUE,
                "pod-a",
                "error",
                null,
                "handler",
                "java.lang.IllegalStateException",
                Long.MAX_VALUE,
                "4bf92f3577b34da6a3ce929d0e0e4736",
                SHA_OF_ABC,
                "committed");
        JournalBatch.Body body = new JournalBatch.Body(64);
        body.write(draft(failedFirst(), new org.apache.pulsar.client.impl.BatchMessageIdImpl(4, 0, -1, 2), true));
        body.write(draft(
                extreme,
                new org.apache.pulsar.client.impl.BatchMessageIdImpl(
                        Long.MAX_VALUE, -1, Integer.MAX_VALUE, Integer.MIN_VALUE),
                false));
        body.write(draft(replayedCopy(), new org.apache.pulsar.client.impl.MessageIdImpl(9, 1, -1), false));

        assertThat(JournalBatch.read(JournalBatch.properties(), body.done().body()))
                .containsExactly(failedFirst(), extreme, replayedCopy());
    }
}
