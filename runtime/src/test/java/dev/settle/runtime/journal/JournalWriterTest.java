package dev.settle.runtime.journal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

class JournalWriterTest {
    private final ManualTime time = new ManualTime();

    /** A sink that stores what it is given, or loses it all while {@code down}, or never answers while {@code hung}. */
    static final class FakeSink implements JournalSink {
        final List<JournalRecord> stored = new ArrayList<>();
        final List<CompletableFuture<Integer>> unanswered = new ArrayList<>();
        volatile boolean down;
        volatile boolean hung;
        volatile boolean throwing;
        volatile boolean closed;
        /** Making its first producer: a write then loses everything, as Pulsar's sink does without a producer. */
        volatile boolean starting;

        @Override
        public boolean starting() {
            return starting;
        }

        @Override
        public synchronized CompletionStage<Integer> write(List<JournalBatch> batches) {
            List<JournalRecord> records = new ArrayList<>();
            for (JournalBatch batch : batches) {
                records.addAll(JournalBatch.read(JournalBatch.properties(), batch.body()));
            }
            if (throwing) {
                throw new IllegalStateException("a sink's bug");
            }
            if (hung) {
                CompletableFuture<Integer> never = new CompletableFuture<>();
                unanswered.add(never);
                return never;
            }
            if (down || starting) {
                return CompletableFuture.completedFuture(records.size());
            }
            stored.addAll(records);
            return CompletableFuture.completedFuture(0);
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    static JournalRecord record(int attempt) {
        return new JournalRecord(
                1_000L + attempt,
                "orders",
                "persistent://public/default/orders",
                "1:2:-1",
                "persistent://public/default/orders@1:2:-1",
                "k",
                attempt,
                "com.acme.Orders",
                0,
                "pod-a",
                "error",
                null,
                "handler",
                "java.lang.IllegalStateException",
                120,
                null,
                "ab",
                null);
    }

    @Test
    void aRecordReachesTheTopicWithin100Milliseconds() {
        FakeSink sink = new FakeSink();
        JournalWriter writer = new JournalWriter("t", sink, time, 8);

        writer.offer(record(1));
        time.advance(Duration.ofMillis(99));
        assertThat(sink.stored).isEmpty();
        time.advance(Duration.ofMillis(1));

        assertThat(sink.stored).containsExactly(record(1));
        assertThat(writer.written()).isEqualTo(1);
    }

    @Test
    void recordsSettledWhileTheFirstProducerIsMadeAreKeptForTheFlushAfterIt() {
        // A runtime started on a redelivered message settles it in its first milliseconds, before its journal's
        // producer exists: that record is a step of the message's story (JournalStoryIT), not a loss.
        FakeSink sink = new FakeSink();
        sink.starting = true;
        JournalWriter writer = new JournalWriter("t", sink, time, 8);

        writer.offer(record(1));
        time.advance(Duration.ofMillis(300));
        assertThat(writer.dropped()).isZero();

        sink.starting = false;
        time.advance(Duration.ofMillis(100));
        assertThat(sink.stored).containsExactly(record(1));
        assertThat(writer.written()).isEqualTo(1);
    }

    @Test
    void whileTheFirstProducerIsMadeAFullWriterStillDropsCounted() {
        FakeSink sink = new FakeSink();
        sink.starting = true;
        JournalWriter writer = new JournalWriter("t", sink, time, 2);

        writer.offer(record(1));
        writer.offer(record(2));
        time.advance(Duration.ofMillis(100));
        assertThat(writer.offer(record(3))).isFalse();

        assertThat(writer.dropped()).isEqualTo(1);
    }

    @Test
    void aFullQueueDropsTheRecordAndCountsItWithoutWaiting() {
        FakeSink sink = new FakeSink();
        JournalWriter writer = new JournalWriter("t", sink, time, 2);

        assertThat(writer.offer(record(1))).isTrue();
        assertThat(writer.offer(record(2))).isTrue();
        assertThat(writer.offer(record(3))).isFalse();

        assertThat(writer.dropped()).isEqualTo(1);
        time.advance(Duration.ofMillis(100));
        assertThat(sink.stored).containsExactly(record(1), record(2));
    }

    @Test
    void aTopicThatCannotBeWrittenLosesItsRecordsCountedAndTheFlushesGoOn() {
        FakeSink sink = new FakeSink();
        JournalWriter writer = new JournalWriter("t", sink, time, 8);
        sink.down = true;

        writer.offer(record(1));
        writer.offer(record(2));
        time.advance(Duration.ofMillis(100));
        assertThat(writer.dropped()).isEqualTo(2);

        sink.down = false;
        writer.offer(record(3));
        time.advance(Duration.ofMillis(100));
        assertThat(sink.stored).containsExactly(record(3));
        assertThat(writer.written()).isEqualTo(1);
    }

    @Test
    void aTopicThatNeverAnswersFillsTheQueueAtMostAndOfferStillReturnsAtOnce() {
        FakeSink sink = new FakeSink();
        JournalWriter writer = new JournalWriter("t", sink, time, 4);
        sink.hung = true;

        for (int i = 1; i <= 10; i++) {
            writer.offer(record(i));
            time.advance(Duration.ofMillis(100));
        }
        // Each flush handed its records to the hung sink: the queue never held them back, nothing was dropped yet.
        assertThat(sink.unanswered).hasSize(10);
        sink.unanswered.forEach(write -> write.complete(1));
        assertThat(writer.dropped()).isEqualTo(10);
    }

    @Test
    void aSinkThatThrowsLosesItsBatchCountedAndTheNextFlushStillRuns() {
        FakeSink sink = new FakeSink();
        JournalWriter writer = new JournalWriter("t", sink, time, 8);
        sink.throwing = true;
        writer.offer(record(1));
        time.advance(Duration.ofMillis(100));
        assertThat(writer.dropped()).isEqualTo(1);

        sink.throwing = false;
        writer.offer(record(2));
        time.advance(Duration.ofMillis(100));
        assertThat(sink.stored).containsExactly(record(2));
    }

    @Test
    void closeHandsOverWhatIsQueuedClosesTheSinkAndRefusesMore() {
        FakeSink sink = new FakeSink();
        JournalWriter writer = new JournalWriter("t", sink, time, 8);
        writer.offer(record(1));

        writer.close();

        assertThat(sink.stored).containsExactly(record(1));
        assertThat(sink.closed).isTrue();
        assertThat(writer.offer(record(2))).isFalse();
        assertThat(time.pending()).isZero();
    }

    @Test
    void theJournalsTellEachTopicsDroppedRecordsZeroBeforeItsFirstSubscription() {
        FakeSink sink = new FakeSink();
        sink.down = true;
        Journals journals = new Journals(topic -> sink, time);
        java.util.function.LongSupplier dropped = journals.dropped("persistent://acme/ops/journal");
        assertThat(dropped.getAsLong()).isZero();

        dev.settle.runtime.manifest.SubscriptionSpec spec = dev.settle.runtime.manifest.SubscriptionSpec.builder(
                        "orders", List.of("persistent://acme/orders/in"))
                .journal(java.util.Optional.of("persistent://acme/ops/journal"))
                .build();
        journals.forSubscription(spec);
        journals.writers().get("persistent://acme/ops/journal").offer(record(1));
        time.advance(Duration.ofMillis(100));

        assertThat(dropped.getAsLong()).isEqualTo(1);
    }

    @Test
    void closingTheJournalsKeepsEachTopicsDroppedCount() {
        FakeSink sink = new FakeSink();
        sink.down = true;
        Journals journals = new Journals(topic -> sink, time);
        dev.settle.runtime.manifest.SubscriptionSpec spec = dev.settle.runtime.manifest.SubscriptionSpec.builder(
                        "orders", List.of("persistent://acme/orders/in"))
                .journal(java.util.Optional.of("persistent://acme/ops/journal"))
                .build();
        journals.forSubscription(spec);
        journals.writers().get("persistent://acme/ops/journal").offer(record(1));
        time.advance(Duration.ofMillis(100));

        journals.close();

        // The last scrape after a stop still tells the record lost.
        assertThat(journals.dropped("persistent://acme/ops/journal").getAsLong())
                .isEqualTo(1);
    }
}
