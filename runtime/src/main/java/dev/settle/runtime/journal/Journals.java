package dev.settle.runtime.journal;

import dev.settle.runtime.driver.Journal;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * The runtime's journal writers, one per journal topic, shared by the subscriptions that write to it, each made on
 * the first subscription that journals to its topic. Thread-safe.
 */
public final class Journals implements AutoCloseable {
    private final Function<String, JournalSink> sinks;
    private final Time time;
    private final Map<String, JournalWriter> writers = new ConcurrentHashMap<>();

    Journals(Function<String, JournalSink> sinks, Time time) {
        this.sinks = sinks;
        this.time = time;
    }

    /** Journals written by {@code client}'s producers, flushed on {@code time}'s timer. */
    public static Journals of(PulsarClient client, Time time) {
        return new Journals(topic -> new PulsarJournalSink(client, topic, time), time);
    }

    /** The journal of {@code spec}: {@link Journal#NONE} unless it says {@code journal: true}. */
    public Journal forSubscription(SubscriptionSpec spec) {
        if (spec.journal().isEmpty()) {
            return Journal.NONE;
        }
        JournalWriter writer =
                writers.computeIfAbsent(spec.journal().get(), t -> JournalWriter.start(t, sinks.apply(t), time));
        return new SubscriptionJournal(spec.name(), spec.deadLetter(), writer, time, spec.journalPerHandling());
    }

    /** Records lost so far on the journal topic {@code topic}, read when asked: 0 until a subscription writes to it. */
    public LongSupplier dropped(String topic) {
        return () -> {
            JournalWriter writer = writers.get(topic);
            return writer == null ? 0 : writer.dropped();
        };
    }

    /** The writers, by topic: for metrics and tests. */
    public Map<String, JournalWriter> writers() {
        return Map.copyOf(writers);
    }

    /**
     * Sends what each writer holds and closes its producer. The writers stay, closed, so their counts still read (a
     * last scrape of {@link #dropped} after a stop tells the records lost, not 0).
     */
    @Override
    public void close() {
        writers.values().forEach(JournalWriter::close);
    }
}
