package dev.settle.runtime.cli;

import dev.settle.runtime.driver.DeadLetterProperties;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code settle dlq replay} does with one dead letter (docs/dead-letters.md, "Replaying dead letters"): a pure
 * function of the letter's properties, the {@code --where} conditions and {@code --max-replays}, so every rule is
 * tested without a broker.
 */
final class ReplayRules {
    /** The stage a letter written by the Pulsar client (no {@code settle.stage}) is matched as. */
    static final String CLIENT_STAGE = "none";

    /** Where a letter goes. */
    enum Action {
        /** Back to its topic, with the replay count one higher. */
        REPLAY,
        /** To the parking topic: replayed {@code --max-replays} times already. */
        PARK,
        /** Left where it is, unacknowledged: a {@code --where} condition does not match it. */
        SKIP,
        /** Left where it is, unacknowledged: it names no topic to go back to. */
        UNREPLAYABLE
    }

    /** What to do, where to, and the properties the sent copy carries. */
    record Decision(Action action, Optional<String> topic, Map<String, String> properties) {}

    private final Map<String, List<String>> where;
    private final int maxReplays;

    private ReplayRules(Map<String, List<String>> where, int maxReplays) {
        this.where = where;
        this.maxReplays = maxReplays;
    }

    /**
     * @param conditions the {@code --where} values, each {@code stage=...} or {@code exception=...}: a letter must
     *     match one value of each key given
     * @throws IllegalArgumentException naming the condition and what is accepted
     */
    static ReplayRules of(List<String> conditions, int maxReplays) {
        if (maxReplays < 1) {
            throw new IllegalArgumentException("--max-replays must be at least 1, was " + maxReplays);
        }
        Map<String, List<String>> where = new LinkedHashMap<>();
        for (String condition : conditions) {
            int equals = condition.indexOf('=');
            String key = equals < 0 ? condition : condition.substring(0, equals);
            if (equals < 0 || !(key.equals("stage") || key.equals("exception")) || equals == condition.length() - 1) {
                throw new IllegalArgumentException("--where '" + condition + "': say stage=STAGE (decode, handler,"
                        + " output, refused_retry_after, retry, or " + CLIENT_STAGE + " for the client's letters) or"
                        + " exception=CLASS (the exception's class name, as settle dlq list shows it)");
            }
            where.computeIfAbsent(key, k -> new ArrayList<>()).add(condition.substring(equals + 1));
        }
        return new ReplayRules(where, maxReplays);
    }

    Decision decide(Map<String, String> letter) {
        String stage = letter.getOrDefault(DeadLetterProperties.STAGE, CLIENT_STAGE);
        String exception = letter.getOrDefault(DeadLetterProperties.EXCEPTION_CLASS, "");
        if (!matches("stage", stage) || !matches("exception", exception)) {
            return new Decision(Action.SKIP, Optional.empty(), Map.of());
        }
        String topic = letter.get(DeadLetterProperties.REAL_TOPIC);
        if (topic == null || topic.isBlank()) {
            return new Decision(Action.UNREPLAYABLE, Optional.empty(), Map.of());
        }
        int replays = replayCount(letter);
        if (replays >= maxReplays) {
            return new Decision(Action.PARK, Optional.empty(), letter);
        }
        // The original's own properties: the cause and the client's names describe the last failure, not the
        // message; the replay count goes with it, so the next dead letter, copying it, carries it on.
        Map<String, String> sent = new LinkedHashMap<>();
        letter.forEach((name, value) -> {
            if (!name.startsWith(DeadLetterProperties.PREFIX)
                    && !name.equals(DeadLetterProperties.REAL_TOPIC)
                    && !name.equals(DeadLetterProperties.REAL_SUBSCRIPTION)
                    && !name.equals(DeadLetterProperties.ORIGIN_MESSAGE_ID)) {
                sent.put(name, value);
            }
        });
        sent.put(DeadLetterProperties.REPLAY_COUNT, Integer.toString(replays + 1));
        return new Decision(Action.REPLAY, Optional.of(topic), sent);
    }

    private boolean matches(String key, String value) {
        List<String> wanted = where.get(key);
        return wanted == null || wanted.contains(value);
    }

    /** The letter's replay count; an unreadable one counts as none, so the letter is still replayed, then parked. */
    static int replayCount(Map<String, String> letter) {
        String count = letter.get(DeadLetterProperties.REPLAY_COUNT);
        if (count == null) {
            return 0;
        }
        try {
            return Math.max(0, Integer.parseInt(count.strip()));
        } catch (NumberFormatException unreadable) {
            return 0;
        }
    }

    /** The parking topic of a dead-letter topic. */
    static String parkingTopic(String deadLetterTopic) {
        return deadLetterTopic + "-parked";
    }
}
