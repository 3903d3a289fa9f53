package dev.settle.runtime.deadletter;

import dev.settle.runtime.manifest.UntrustedText;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The rules for a copy kept on a subscription's delay topic ({@code durableDelays: true}, docs/concepts.md "Durable
 * delays"): what it carries and how a copy read back is trusted. A copy is the same message to its handler: the
 * original's payload, key, event time and properties ({@link MessageCopy}), the origin id its story goes by ({@link
 * Origin#PROPERTY}, the first original's across every copy) and the attempts made so far ({@link #ATTEMPTS}), since
 * the broker counts a copy's deliveries from zero. The delay topic is untrusted input like the input topic: anyone
 * allowed to produce there can write anything, so a copy whose origin is not one of the subscription's topics is
 * refused, and its attempts can only raise the count the broker gives it. Pure functions.
 */
public final class DelayCopy {
    /** The attempts made before the copy was kept (the dead letters' {@code settle.attempts}, same meaning). */
    public static final String ATTEMPTS = DeadLetterProperties.ATTEMPTS;

    private static final Pattern COUNT = Pattern.compile("[0-9]{1,9}");

    private DelayCopy() {}

    /**
     * The properties of the copy of a message with {@code properties}, whose story goes by {@code origin}, after its
     * {@code attemptsMade}-th attempt: its own, with the origin and the attempts set over whatever it carried.
     */
    public static Map<String, String> properties(Map<String, String> properties, String origin, int attemptsMade) {
        Map<String, String> copy = new LinkedHashMap<>(properties);
        copy.put(Origin.PROPERTY, origin);
        copy.put(ATTEMPTS, Integer.toString(attemptsMade));
        return copy;
    }

    /**
     * The attempt a copy read from the delay topic is on: the attempts its copy carries plus the broker's count of its
     * own deliveries, and never below the broker's count alone. A forged or unreadable {@link #ATTEMPTS} (absent,
     * signed, spaced, longer than nine digits) counts as 0, so a forgery can only bring the cap closer.
     */
    public static int attempt(Map<String, String> copy, int redeliveryCount) {
        String carried = copy.get(ATTEMPTS);
        int made = carried != null && COUNT.matcher(carried).matches() ? Integer.parseInt(carried) : 0;
        return (int) Math.min(Integer.MAX_VALUE, (long) made + redeliveryCount + 1);
    }

    /**
     * Why a message read from the delay topic is refused, or empty when it is a copy of a message of one of {@code
     * topics} (fully qualified; a partition of one counts as it): it must carry an origin {@code topic@messageId}.
     */
    public static Optional<String> refusal(Map<String, String> copy, List<String> topics) {
        String origin = copy.get(Origin.PROPERTY);
        if (origin == null || origin.isBlank()) {
            return Optional.of("it carries no " + Origin.PROPERTY + " (a delay copy names the message it copies)");
        }
        int at = origin.lastIndexOf('@');
        if (at <= 0 || at == origin.length() - 1) {
            return Optional.of(Origin.PROPERTY + " '" + UntrustedText.escape(origin, 300) + "' is not topic@messageId");
        }
        String topic = origin.substring(0, at);
        for (String consumed : topics) {
            if (topic.equals(consumed) || topic.startsWith(consumed + "-partition-")) {
                return Optional.empty();
            }
        }
        return Optional.of(Origin.PROPERTY + " '" + UntrustedText.escape(origin, 300) + "' names topic '"
                + UntrustedText.escape(topic, 300) + "', which is not one of the subscription's topics " + topics);
    }

    /** The topic of an origin id {@code topic@messageId} that {@link #refusal} took. */
    public static String topicOf(String origin) {
        return origin.substring(0, origin.lastIndexOf('@'));
    }

    /** The message id of an origin id {@code topic@messageId} that {@link #refusal} took. */
    public static String messageIdOf(String origin) {
        return origin.substring(origin.lastIndexOf('@') + 1);
    }
}
