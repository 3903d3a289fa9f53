package dev.settle.runtime.journal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class StoryTest {
    private static final String TOPIC = "persistent://public/default/orders";
    private static final String ORIGIN = TOPIC + "@1:0:-1";

    static JournalRecord record(
            long at, String messageId, int attempt, String instance, int generation, String outcome) {
        return new JournalRecord(
                at,
                "orders",
                TOPIC,
                messageId,
                ORIGIN,
                "k",
                attempt,
                "c",
                generation,
                instance,
                outcome,
                outcome.equals("dead_lettered") ? "orders-dlq" : null,
                outcome.equals("ack") ? null : "handler",
                outcome.equals("ack") ? null : "java.lang.IllegalStateException",
                10,
                null,
                "ab",
                null);
    }

    @Test
    void aMessageFailedDeadLetteredReplayedAndAcknowledgedIsToldInOrderEndingAcknowledgedAfterReplay() {
        List<JournalRecord> records = List.of(
                record(400, "2:0:-1", 1, "pod-b", 2, "ack"),
                record(100, "1:0:-1", 1, "pod-a", 1, "error"),
                record(200, "1:0:-1", 2, "pod-a", 1, "error"),
                record(300, "1:0:-1", 3, "pod-a", 1, "dead_lettered"));
        List<Story.Letter> letters =
                List.of(new Story.Letter(Instant.ofEpochMilli(310), "orders-dlq", "5:0:-1", ORIGIN, false));

        Story story = Story.of(ORIGIN, records, letters);

        assertThat(story.steps())
                .extracting(step -> step.kind() + " " + step.fields().getOrDefault("attempt", "") + " "
                        + step.fields().getOrDefault("instance", ""))
                .containsExactly(
                        "handled 1 pod-a",
                        "handled 2 pod-a",
                        "handled 3 pod-a",
                        "dead letter  ",
                        "replayed  ",
                        "handled 1 pod-b");
        assertThat(story.disposition()).isEqualTo("acknowledged after replay");
    }

    @Test
    void anAttemptWithNoRecordShowsAsAGapInferredFromTheNextRecordsAttempt() {
        Story story = Story.of(
                ORIGIN,
                List.of(record(100, "1:0:-1", 1, "pod-a", 1, "error"), record(900, "1:0:-1", 3, "pod-b", 1, "ack")),
                List.of());

        assertThat(story.steps())
                .extracting(step -> step.kind() + " " + step.fields().get("attempt"))
                .containsExactly("handled 1", "gap 2", "handled 3");
        assertThat(story.disposition()).isEqualTo("acknowledged");
    }

    @Test
    void aLetterParkedAfterItsLastRecordEndsTheStoryParked() {
        Story story = Story.of(
                ORIGIN,
                List.of(record(300, "1:0:-1", 3, "pod-a", 1, "dead_lettered")),
                List.of(new Story.Letter(Instant.ofEpochMilli(500), "orders-dlq-parked", "7:0:-1", ORIGIN, true)));

        assertThat(story.disposition()).isEqualTo("parked in orders-dlq-parked");
    }

    @Test
    void aMessageStillComingBackSaysSoAndOtherMessagesAreLeftOut() {
        JournalRecord other = new JournalRecord(
                50,
                "orders",
                TOPIC,
                "9:0:-1",
                TOPIC + "@9:0:-1",
                null,
                1,
                "c",
                0,
                "pod-a",
                "ack",
                null,
                null,
                null,
                1,
                null,
                "cd",
                null);
        Story story = Story.of(ORIGIN, List.of(other, record(100, "1:0:-1", 1, "pod-a", 1, "error")), List.of());

        assertThat(story.steps()).hasSize(1);
        assertThat(story.disposition()).startsWith("not settled yet: attempt 1 ended error");
    }

    @Test
    void aCallBegunWithNoSettlementAfterItEndsTheStoryNotSettledNamingItsPod() {
        List<JournalRecord> records = List.of(
                record(100, "1:0:-1", 1, "pod-a", 1, "handling"),
                record(110, "1:0:-1", 1, "pod-a", 1, "error"),
                record(400, "1:0:-1", 2, "pod-a", 1, "handling"));

        Story story = Story.of(ORIGIN, records, List.of());

        assertThat(story.steps())
                .extracting(step -> step.fields().get("outcome"))
                .containsExactly("handling", "error", "handling");
        assertThat(story.disposition())
                .isEqualTo("not settled yet: attempt 2 began on pod-a and has no settlement (still running, or its"
                        + " runtime stopped first: the message comes back)");
    }
}
