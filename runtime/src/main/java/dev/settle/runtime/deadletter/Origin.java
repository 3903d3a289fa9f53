package dev.settle.runtime.deadletter;

import java.util.Map;

/**
 * The id a message's story goes by in the journal, the same across the copies of it Settle makes: its own
 * {@code topic@messageId} the first time, and the original's on a copy, which carries it as {@link #PROPERTY}
 * ({@code settle dlq replay} sets it on each letter it sends back). A dead letter names its original through the
 * properties every letter carries ({@code REAL_TOPIC}, {@code ORIGIN_MESSAGE_ID}).
 */
public final class Origin {
    /** The origin id a copy carries; a Settle property, so Settle's dead letters keep the input's as settle.input.*. */
    public static final String PROPERTY = DeadLetterProperties.PREFIX + "origin";

    private Origin() {}

    /** The origin id of a message consumed from {@code topic} with {@code messageId} and these properties. */
    public static String ofMessage(Map<String, String> properties, String topic, String messageId) {
        String carried = properties.get(PROPERTY);
        return carried != null && !carried.isBlank() ? carried : topic + "@" + messageId;
    }

    /**
     * The origin id of the message a dead letter holds: the one its input carried (Settle's letters keep it as
     * {@code settle.input.settle.origin}, the client's as is), else its original's topic and id; empty text when the
     * letter names neither.
     */
    public static String ofLetter(Map<String, String> letter) {
        String kept = letter.get(DeadLetterProperties.INPUT_PREFIX + PROPERTY);
        if (kept != null && !kept.isBlank()) {
            return kept;
        }
        String carried = letter.get(PROPERTY);
        if (carried != null && !carried.isBlank()) {
            return carried;
        }
        String topic = letter.get(DeadLetterProperties.REAL_TOPIC);
        String id = letter.get(DeadLetterProperties.ORIGIN_MESSAGE_ID);
        return topic == null || id == null ? "" : topic + "@" + id;
    }
}
