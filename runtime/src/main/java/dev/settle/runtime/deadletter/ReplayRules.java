package dev.settle.runtime.deadletter;

import dev.settle.runtime.manifest.Topics;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What {@code settle dlq replay} does with one dead letter (docs/dead-letters.md, "Replaying dead letters"): a pure
 * function of the letter's properties, the {@code --where} conditions, {@code --max-replays} and the subscription's
 * topics, so every rule is tested without a broker.
 *
 * <p>A letter's {@code REAL_TOPIC} is data from outside: anyone who may produce to the dead-letter topic writes any
 * letter, and the Pulsar client's own letters keep a {@code REAL_TOPIC} the input already carried (it copies with
 * {@code putIfAbsent}, 4.2.4). So a replay sends only to a topic the subscription consumes ({@link Targets}), with the
 * manifest's credentials, and never to a topic of Settle's own (issue 40).
 */
public final class ReplayRules {
    /** The stage a letter written by the Pulsar client (no {@code settle.stage}) is matched as. */
    public static final String CLIENT_STAGE = "none";

    /** Where a letter goes. */
    public enum Action {
        /** Back to its topic, with the replay count one higher. */
        REPLAY,
        /** To the parking topic: replayed {@code --max-replays} times already. */
        PARK,
        /** Left where it is, unacknowledged: a {@code --where} condition does not match it. */
        SKIP,
        /**
         * Left where it is, unacknowledged, and neither shown nor counted as this subscription's: the letter of another
         * subscription sharing the dead-letter topic ({@link DeadLetterProperties#belongsTo}), which its own replay
         * sends.
         */
        OTHER_SUBSCRIPTION,

        /** Left where it is, unacknowledged: it names no topic to go back to. */
        UNREPLAYABLE,
        /**
         * Left where it is, unacknowledged: its {@code REAL_TOPIC} is not a topic the subscription consumes, or is one
         * of Settle's own. Never parked: the parking topic holds letters replayed too often, not refused ones.
         */
        FOREIGN
    }

    /**
     * What to do, where to, the properties the sent copy carries, and why a {@link Action#FOREIGN} letter is left
     * (empty otherwise).
     */
    public record Decision(Action action, Optional<String> topic, Map<String, String> properties, String why) {
        Decision(Action action, Optional<String> topic, Map<String, String> properties) {
            this(action, topic, properties, "");
        }
    }

    private final Map<String, List<String>> where;
    private final int maxReplays;
    private final Targets targets;

    private ReplayRules(Map<String, List<String>> where, int maxReplays, Targets targets) {
        this.where = where;
        this.maxReplays = maxReplays;
        this.targets = targets;
    }

    /**
     * @param conditions the {@code --where} values, each {@code stage=...} or {@code exception=...}: a letter must
     *     match one value of each key given
     * @throws IllegalArgumentException naming the condition and what is accepted
     */
    public static ReplayRules of(List<String> conditions, int maxReplays, Targets targets) {
        return new ReplayRules(where(conditions, maxReplays), maxReplays, Objects.requireNonNull(targets));
    }

    /**
     * The {@code --where} conditions by key, once {@code --max-replays} and each condition are checked.
     *
     * @throws IllegalArgumentException naming the condition and what is accepted
     */
    public static Map<String, List<String>> where(List<String> conditions, int maxReplays) {
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
        return where;
    }

    public Decision decide(Map<String, String> letter) {
        if (!DeadLetterProperties.belongsTo(letter, targets.subscription)) {
            return new Decision(Action.OTHER_SUBSCRIPTION, Optional.empty(), Map.of());
        }
        String stage = letter.getOrDefault(DeadLetterProperties.STAGE, CLIENT_STAGE);
        String exception = letter.getOrDefault(DeadLetterProperties.EXCEPTION_CLASS, "");
        if (!matches("stage", stage) || !matches("exception", exception)) {
            return new Decision(Action.SKIP, Optional.empty(), Map.of());
        }
        String topic = letter.get(DeadLetterProperties.REAL_TOPIC);
        if (topic == null || topic.isBlank()) {
            return new Decision(Action.UNREPLAYABLE, Optional.empty(), Map.of());
        }
        Optional<String> refused = targets.refusal(topic);
        if (refused.isPresent()) {
            return new Decision(Action.FOREIGN, Optional.empty(), Map.of(), refused.get());
        }
        int replays = replayCount(letter);
        if (replays >= maxReplays) {
            return new Decision(Action.PARK, Optional.empty(), letter);
        }
        Map<String, String> sent = DeadLetterProperties.replayed(letter);
        // The story goes on under the original's id: settle trace follows the replayed copy to its letter.
        String origin = Origin.ofLetter(letter);
        if (!origin.isEmpty()) {
            sent.put(Origin.PROPERTY, origin);
        }
        return new Decision(Action.REPLAY, Optional.of(Topics.fullName(topic)), sent);
    }

    private boolean matches(String key, String value) {
        List<String> wanted = where.get(key);
        return wanted == null || wanted.contains(value);
    }

    /** The letter's replay count; an unreadable one counts as none, so the letter is still replayed, then parked. */
    public static int replayCount(Map<String, String> letter) {
        return DeadLetterProperties.replayCount(letter);
    }

    /** The parking topic of a dead-letter topic. */
    public static String parkingTopic(String deadLetterTopic) {
        return deadLetterTopic + "-parked";
    }

    /**
     * The topics a replay may send to: one the subscription consumes (one of its {@code topics}, short or fully
     * qualified, or a {@code -partition-N} of one; or a topic of its {@code topicsPattern}'s namespace the pattern
     * matches), and never one of Settle's own: a dead-letter or parking topic of the manifest, the code store's
     * {@code settle-code*}, or a Pulsar system topic ({@code __...}).
     */
    public static final class Targets {
        private static final Pattern PARTITION = Pattern.compile("(.+)-partition-[0-9]+");

        private final String subscription;
        private final Topics consumed;
        private final Set<String> owned;

        /**
         * @param consumed the subscription's topics, as the manifest holds them (fully qualified)
         * @param deadLetterTopics every dead-letter topic of the manifest; each and its parking topic are Settle's
         */
        public Targets(String subscription, Topics consumed, Collection<String> deadLetterTopics) {
            this.subscription = subscription;
            this.consumed = consumed;
            Set<String> settles = new HashSet<>();
            for (String topic : deadLetterTopics) {
                settles.add(Topics.fullName(topic));
                settles.add(Topics.fullName(parkingTopic(topic)));
            }
            this.owned = Set.copyOf(settles);
        }

        /** The subscription whose topics these are. */
        String subscription() {
            return subscription;
        }

        /** Why a replay may not send to {@code topic}; empty when it may. */
        Optional<String> refusal(String topic) {
            String full;
            try {
                full = Topics.fullName(topic);
            } catch (IllegalArgumentException invalid) {
                return Optional.of("REAL_TOPIC " + invalid.getMessage());
            }
            Matcher partition = PARTITION.matcher(full);
            String partitioned = partition.matches() ? partition.group(1) : full;
            String local = partitioned.substring(partitioned.lastIndexOf('/') + 1);
            if (owned.contains(full) || owned.contains(partitioned)) {
                return Optional.of("REAL_TOPIC " + full + " is a dead-letter or parking topic of the manifest");
            }
            if (local.startsWith("settle-code")) {
                return Optional.of("REAL_TOPIC " + full + " is a topic of Settle's code store");
            }
            if (local.startsWith("__")) {
                return Optional.of("REAL_TOPIC " + full + " is a Pulsar system topic");
            }
            if (consumed.names().contains(full) || consumed.names().contains(partitioned)) {
                return Optional.empty();
            }
            if (consumed.pattern().isPresent()
                    && matchesPattern(consumed.pattern().get(), partitioned)) {
                return Optional.empty();
            }
            return Optional.of("REAL_TOPIC " + full + " is not a topic subscription '" + subscription + "' consumes ("
                    + consumed + ")");
        }

        /** As Pulsar's pattern consumer: in the pattern's own namespace, the partitioned topic's name matched. */
        private static boolean matchesPattern(String pattern, String topic) {
            String[] parts = pattern.split("/", -1);
            String namespace = parts[0] + "//" + parts[2] + "/" + parts[3] + "/";
            return topic.startsWith(namespace)
                    && Pattern.compile(pattern).matcher(topic).matches();
        }
    }
}
