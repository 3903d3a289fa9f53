package dev.settle.runtime.journal;

import dev.settle.runtime.driver.Journal;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.Topics;
import dev.settle.runtime.time.Time;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * The runtime's journal writers, one per journal topic, shared by the subscriptions that write to it, each made on
 * the first subscription that journals to its topic. Thread-safe.
 */
public final class Journals implements AutoCloseable {
    /** The journal topic's name in a namespace when the manifest names none. */
    public static final String DEFAULT_TOPIC = "settle-journal";

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

    /** The journal of a subscription that writes to {@code topic}. */
    public Journal forSubscription(String subscription, Optional<DeadLetter> deadLetter, String topic) {
        JournalWriter writer = writers.computeIfAbsent(topic, t -> JournalWriter.start(t, sinks.apply(t), time));
        return new SubscriptionJournal(subscription, deadLetter, writer, time);
    }

    /** The writers, by topic: for metrics and tests. */
    public Map<String, JournalWriter> writers() {
        return Map.copyOf(writers);
    }

    /**
     * {@code settle-journal} in the namespace of the subscription's first topic (or of its pattern): where a
     * subscription's records go when {@code journalTopic} names no other.
     */
    public static String defaultTopic(Topics topics) {
        String first = topics.names().isEmpty() ? topics.pattern().orElseThrow() : topics.names().get(0);
        String full = first.contains("://") ? first : Topics.fullName(first);
        int scheme = full.indexOf("://");
        String[] parts = full.substring(scheme + 3).split("/", -1);
        return full.substring(0, scheme) + "://" + parts[0] + "/" + parts[1] + "/" + DEFAULT_TOPIC;
    }

    /** Sends what each writer holds and closes its producer. */
    @Override
    public void close() {
        writers.values().forEach(JournalWriter::close);
        writers.clear();
    }
}
