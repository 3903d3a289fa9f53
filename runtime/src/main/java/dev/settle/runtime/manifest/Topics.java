package dev.settle.runtime.manifest;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a subscription consumes: a list of topic names, or one pattern over a namespace's topics, never both.
 *
 * @param names fully qualified topic names; empty when {@code pattern} is set
 * @param pattern a regular expression over fully qualified names, instead of {@code names}
 */
public record Topics(List<String> names, Optional<String> pattern) {
    public Topics {
        names = List.copyOf(names);
        Objects.requireNonNull(pattern, "pattern");
        if (names.isEmpty() == pattern.isEmpty()) {
            throw new IllegalArgumentException("give topic names or a pattern, exactly one of them");
        }
    }

    /** These topics, fully qualified. */
    public static Topics named(List<String> names) {
        return new Topics(names, Optional.empty());
    }

    /** Every topic whose fully qualified name matches {@code pattern}. */
    public static Topics matching(String pattern) {
        return new Topics(List.of(), Optional.of(pattern));
    }

    /** The pattern, or the names joined by commas: how logs name what is consumed. */
    @Override
    public String toString() {
        return pattern.orElseGet(() -> String.join(",", names));
    }

    /**
     * A topic name in full ({@code orders} is {@code persistent://public/default/orders}), for names given in code.
     *
     * @throws IllegalArgumentException when it is not a valid Pulsar topic name; the message says why
     */
    public static String fullName(String text) {
        return TopicName.parse(text.strip()).toString();
    }

    /**
     * {@code settle-journal} in the namespace of the first topic (or of the pattern): the journal topic of a
     * subscription whose {@code journalTopic} names none. Persistent, also beside a non-persistent topic: the story is
     * read after the fact.
     */
    public String defaultJournalTopic() {
        // A pattern is fully qualified already (the reader refuses any other).
        String first = names.isEmpty() ? pattern.orElseThrow() : fullName(names.get(0));
        String[] parts = first.substring(first.indexOf("://") + 3).split("/", -1);
        return "persistent://" + parts[0] + "/" + parts[1] + "/settle-journal";
    }
}
