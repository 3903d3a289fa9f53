package dev.settle.runtime.journal;

import dev.settle.runtime.deadletter.Origin;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One settled delivery as the journal keeps it: which message (its id, and the origin id that names its story across
 * copies and replayed letters), where and by what it was handled, and how it ended. Never the payload, only its
 * SHA-256; never an exception's message, only its class: a journal topic is read by operators who may not read the
 * data (docs/security.md).
 *
 * <p>A flush writes many in one message ({@link JournalBatch}); the journal's first format, one record as the
 * properties of an empty message ({@link #properties()}, read back by {@link #from}), is still read, and
 * {@code settle trace} prints a record's fields from its properties.
 *
 * @param at when it was settled, in milliseconds since the epoch
 * @param subscription the subscription, as the manifest names it
 * @param topic the topic the message was consumed from
 * @param messageId its id there
 * @param origin the id its story goes by: a replayed letter's is the original's ({@link Origin})
 * @param key the message's key; null when it has none
 * @param attempt the redelivery count + 1
 * @param code the handler or function that ran it, and its generation when live code runs
 * @param generation the generation of live code that ran it; 0 when it ran the manifest's code unnumbered
 * @param instance the pod (or host) that ran it
 * @param outcome how it was settled: {@code ack}, {@code drop}, {@code retry}, {@code retry_after}, {@code none},
 *     {@code error}, {@code refused}, or {@code dead_lettered} (a last attempt that did not acknowledge); {@code
 *     handling} for a call's beginning ({@code journalPerHandling: true}), which has no failure, timing nor hash
 * @param deadLetterTopic where a {@code dead_lettered} delivery went; null otherwise
 * @param failureStage where it failed ({@code handler}, {@code decode}, ...); null when it did not
 * @param causeClass the class of what was thrown; null when nothing was
 * @param handlingMicros from the call's start to the settlement
 * @param traceId the W3C trace id it travelled with; null when it carried none
 * @param payloadSha256 the SHA-256 of its payload, in hex
 * @param transaction exactly-once: {@code committed} or {@code aborted}; null at at-least-once
 */
public record JournalRecord(
        long at,
        String subscription,
        String topic,
        String messageId,
        String origin,
        String key,
        int attempt,
        String code,
        int generation,
        String instance,
        String outcome,
        String deadLetterTopic,
        String failureStage,
        String causeClass,
        long handlingMicros,
        String traceId,
        String payloadSha256,
        String transaction) {

    /** Marks a journal message, so a reader skips anything else a producer put on the topic. */
    static final String VERSION = "settle.journal";

    public JournalRecord {
        Objects.requireNonNull(subscription, "subscription");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(origin, "origin");
        Objects.requireNonNull(outcome, "outcome");
    }

    /** The record as message properties; absent fields are left out. */
    public Map<String, String> properties() {
        Map<String, String> p = new LinkedHashMap<>();
        p.put(VERSION, "1");
        p.put("at", Long.toString(at));
        p.put("subscription", subscription);
        p.put("topic", topic);
        p.put("messageId", messageId);
        p.put("origin", origin);
        put(p, "key", key);
        p.put("attempt", Integer.toString(attempt));
        put(p, "code", code);
        p.put("generation", Integer.toString(generation));
        put(p, "instance", instance);
        p.put("outcome", outcome);
        put(p, "deadLetterTopic", deadLetterTopic);
        put(p, "failureStage", failureStage);
        put(p, "causeClass", causeClass);
        p.put("handlingMicros", Long.toString(handlingMicros));
        put(p, "traceId", traceId);
        put(p, "payloadSha256", payloadSha256);
        put(p, "transaction", transaction);
        return p;
    }

    /**
     * The record these properties hold; empty when they are not a journal record (another producer's message, or one
     * whose numbers do not read): a reader skips it rather than fail the whole story.
     */
    public static Optional<JournalRecord> from(Map<String, String> p) {
        if (!"1".equals(p.get(VERSION))) {
            return Optional.empty();
        }
        try {
            return Optional.of(new JournalRecord(
                    Long.parseLong(p.get("at")),
                    p.get("subscription"),
                    p.get("topic"),
                    p.get("messageId"),
                    p.get("origin"),
                    p.get("key"),
                    Integer.parseInt(p.get("attempt")),
                    p.get("code"),
                    Integer.parseInt(p.getOrDefault("generation", "0")),
                    p.get("instance"),
                    p.get("outcome"),
                    p.get("deadLetterTopic"),
                    p.get("failureStage"),
                    p.get("causeClass"),
                    Long.parseLong(p.getOrDefault("handlingMicros", "0")),
                    p.get("traceId"),
                    p.get("payloadSha256"),
                    p.get("transaction")));
        } catch (RuntimeException unreadable) {
            return Optional.empty();
        }
    }

    private static void put(Map<String, String> properties, String name, String value) {
        if (value != null) {
            properties.put(name, value);
        }
    }
}
