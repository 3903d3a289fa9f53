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
        assertThat(JournalBatch.properties()).containsEntry("settle.journal", "2");
        assertThat(readBack(batches)).containsExactlyElementsOf(records);
    }

    @Test
    void recordsPastTheBodyLimitGoInMoreMessagesInOrderNoneSplitEachReadOnItsOwn() {
        List<JournalRecord> records = records(100);

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
        assertThat(JournalBatch.read(Map.of("settle.journal", "3"), body)).isEmpty();
        assertThat(JournalBatch.read(JournalBatch.properties(), null)).isEmpty();
        assertThat(JournalBatch.read(JournalBatch.properties(), "{\"at\":1}".getBytes(StandardCharsets.UTF_8)))
                .isEmpty();
        assertThat(JournalBatch.read(JournalBatch.properties(), Arrays.copyOf(body, body.length - 1)))
                .isEmpty();
        assertThat(JournalBatch.read(JournalBatch.properties(), Arrays.copyOf(body, body.length + 1)))
                .isEmpty();
    }
}
