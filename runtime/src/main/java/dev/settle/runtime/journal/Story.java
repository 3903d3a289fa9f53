package dev.settle.runtime.journal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * The story of one message, as {@code settle trace} tells it: its journal records and its dead letters in time order
 * across instances and generations, the attempts no record tells of (lost to a SIGKILL before the writer's flush),
 * inferred from the next record's attempt, and how it ended. A pure function of what was read, so every rule is
 * tested without a broker.
 */
public final class Story {
    /** One step: a record, a letter, a replay, or a gap. */
    public record Step(Instant at, String kind, Map<String, String> fields) {}

    /** A dead letter of the message, as read from the dead-letter or the parking topic. */
    public record Letter(Instant at, String topic, String messageId, String origin, boolean parked) {}

    private final String origin;
    private final List<Step> steps;
    private final String disposition;

    private Story(String origin, List<Step> steps, String disposition) {
        this.origin = origin;
        this.steps = List.copyOf(steps);
        this.disposition = disposition;
    }

    public String origin() {
        return origin;
    }

    public List<Step> steps() {
        return steps;
    }

    /** How the message ended: acknowledged (after replay), dropped, dead-lettered to ..., parked in ..., or not yet. */
    public String disposition() {
        return disposition;
    }

    /**
     * The story of the message whose origin id is {@code origin}, from its records and letters (any order; those of
     * other messages are left out).
     */
    public static Story of(String origin, List<JournalRecord> records, List<Letter> letters) {
        return of(origin, records, letters, r -> null);
    }

    /**
     * The same, each record's step saying the format of the journal message it was read from ({@code
     * settle.journal}, {@code formatOf}; left out where that answers null).
     */
    public static Story of(
            String origin,
            List<JournalRecord> records,
            List<Letter> letters,
            Function<JournalRecord, String> formatOf) {
        List<JournalRecord> mine = new ArrayList<>(records.stream()
                .filter(r -> r.origin().equals(origin))
                .sorted(Comparator.comparingLong(JournalRecord::at))
                .toList());
        List<Letter> itsLetters = letters.stream()
                .filter(l -> l.origin().equals(origin))
                .sorted(Comparator.comparing(Letter::at))
                .toList();
        List<Step> steps = new ArrayList<>();
        String currentId = null;
        int lastAttempt = 0;
        boolean replayed = false;
        for (JournalRecord r : mine) {
            if (!r.messageId().equals(currentId)) {
                if (!origin.equals(r.topic() + "@" + r.messageId())) {
                    // Another copy of the message, carrying the original's origin id: a replayed letter.
                    replayed = true;
                    steps.add(new Step(
                            Instant.ofEpochMilli(r.at()),
                            "replayed",
                            fields("topic", r.topic(), "messageId", r.messageId())));
                }
                currentId = r.messageId();
                lastAttempt = 0;
            }
            for (int missing = lastAttempt + 1; missing < r.attempt(); missing++) {
                // Attempt counts rise by one per delivery: one missing had no record reach the topic.
                steps.add(new Step(
                        Instant.ofEpochMilli(r.at()),
                        "gap",
                        fields(
                                "messageId",
                                r.messageId(),
                                "attempt",
                                Integer.toString(missing),
                                "why",
                                "no record: lost before it was written (a process killed within 100 ms of it)")));
            }
            lastAttempt = Math.max(lastAttempt, r.attempt());
            steps.add(handled(r, formatOf.apply(r)));
        }
        for (Letter letter : itsLetters) {
            steps.add(new Step(
                    letter.at(),
                    letter.parked() ? "parked" : "dead letter",
                    fields("topic", letter.topic(), "messageId", letter.messageId())));
        }
        steps.sort(Comparator.comparing(Step::at));
        return new Story(origin, steps, disposition(mine, itsLetters, replayed));
    }

    /**
     * The step of a record: its fields, with {@code settle.journal} the format of the message it was read from
     * ({@code format}; left out when null), not the first format's that {@link JournalRecord#properties()} names.
     */
    public static Step handled(JournalRecord r, String format) {
        Map<String, String> fields = new LinkedHashMap<>(r.properties());
        if (format == null) {
            fields.remove(JournalRecord.VERSION);
        } else {
            fields.put(JournalRecord.VERSION, format);
        }
        return new Step(Instant.ofEpochMilli(r.at()), "handled", fields);
    }

    private static String disposition(List<JournalRecord> records, List<Letter> letters, boolean replayed) {
        Letter parked =
                letters.stream().filter(Letter::parked).reduce((a, b) -> b).orElse(null);
        JournalRecord last = records.isEmpty() ? null : records.get(records.size() - 1);
        if (parked != null && (last == null || parked.at().toEpochMilli() >= last.at())) {
            return "parked in " + parked.topic();
        }
        if (last == null) {
            return letters.isEmpty()
                    ? "no record"
                    : "dead-lettered to " + letters.get(letters.size() - 1).topic();
        }
        String after = replayed ? " after replay" : "";
        return switch (last.outcome()) {
            case "ack" -> "acknowledged" + after;
            case "drop" -> "dropped" + after;
            case "dead_lettered" -> "dead-lettered to " + last.deadLetterTopic() + after;
            case SubscriptionJournal.HANDLING ->
                "not settled yet: attempt " + last.attempt() + " began on " + last.instance()
                        + " and has no settlement (still running, or its runtime stopped first: the message comes back)";
            default ->
                "not settled yet: attempt " + last.attempt() + " ended " + last.outcome() + ", the message comes back";
        };
    }

    private static Map<String, String> fields(String... namesAndValues) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            map.put(namesAndValues[i], Objects.requireNonNullElse(namesAndValues[i + 1], ""));
        }
        return map;
    }
}
