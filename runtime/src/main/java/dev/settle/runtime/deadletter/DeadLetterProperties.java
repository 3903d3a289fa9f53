package dev.settle.runtime.deadletter;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * The properties Settle adds to a dead letter it writes, all named with the one prefix {@link #PREFIX}
 * (docs/dead-letters.md has the table): why it failed, when, where, and on which instance; and the one copy of the
 * rules for a letter's properties ({@link #letter}) and for a replayed copy's ({@link #replayed}). Pure functions of
 * what they are given, so the runtime, the test kit and {@code settle dlq} write and read the same letters.
 */
public final class DeadLetterProperties {
    /** Every property Settle adds starts with this, as Kafka Connect's start with {@code __connect.errors.}. */
    public static final String PREFIX = "settle.";

    public static final String STAGE = PREFIX + "stage";
    public static final String EXCEPTION_CLASS = PREFIX + "exception.class";
    public static final String EXCEPTION_MESSAGE = PREFIX + "exception.message";
    public static final String EXCEPTION_STACKTRACE = PREFIX + "exception.stacktrace";
    public static final String ATTEMPTS = PREFIX + "attempts";
    public static final String FIRST_ATTEMPT_TIME = PREFIX + "first.attempt.time";
    public static final String LAST_ATTEMPT_TIME = PREFIX + "last.attempt.time";
    public static final String SUBSCRIPTION = PREFIX + "subscription";
    public static final String CODE = PREFIX + "code";
    public static final String INSTANCE = PREFIX + "instance";
    /**
     * How many later messages of its key were handled before it because its key's hold timed out (docs/concepts.md,
     * "Key-ordered retries"); absent when none was.
     */
    public static final String KEY_PASSED = PREFIX + "key.passed";
    /** How many times {@code settle dlq replay} sent the message back to its topic; absent before the first. */
    public static final String REPLAY_COUNT = PREFIX + "replay.count";

    /**
     * What a message held for a fix ({@code onCap: hold}, docs/dead-letters.md "Hold for a fix") says about its hold,
     * all under this prefix: on the held copy, the code that held it ({@link #HELD_GENERATION}, {@link #HELD_SHA256})
     * and where its original stood ({@link #HELD_PUBLISH_TIME}, {@link #HELD_POSITION}); on the copy a re-drive sends
     * back, and on that copy's dead letter, the same and the hold's cause ({@link #HELD_STAGE} and on).
     */
    public static final String HELD_PREFIX = PREFIX + "held.";

    public static final String HELD_GENERATION = HELD_PREFIX + "generation";
    public static final String HELD_SHA256 = HELD_PREFIX + "sha256";
    public static final String HELD_PUBLISH_TIME = HELD_PREFIX + "publish.time";
    public static final String HELD_POSITION = HELD_PREFIX + "position";
    public static final String HELD_STAGE = HELD_PREFIX + "stage";
    public static final String HELD_EXCEPTION_CLASS = HELD_PREFIX + "exception.class";
    public static final String HELD_EXCEPTION_MESSAGE = HELD_PREFIX + "exception.message";
    public static final String HELD_ATTEMPTS = HELD_PREFIX + "attempts";
    public static final String HELD_CODE = HELD_PREFIX + "code";

    /** The hold's cause a re-driven copy carries: the held copy's property, and its name on the copy. */
    private static final Map<String, String> HELD_CAUSE = Map.of(
            STAGE, HELD_STAGE,
            EXCEPTION_CLASS, HELD_EXCEPTION_CLASS,
            EXCEPTION_MESSAGE, HELD_EXCEPTION_MESSAGE,
            ATTEMPTS, HELD_ATTEMPTS,
            CODE, HELD_CODE);

    /**
     * The client's own properties on a dead letter (its {@code RetryMessageUtil} names): the topic the message was
     * consumed from, the subscription, and its id there. Settle writes them too, so tools reading them keep working.
     */
    public static final String REAL_TOPIC = "REAL_TOPIC";

    public static final String REAL_SUBSCRIPTION = "REAL_SUBSCRIPTION";
    public static final String ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID";

    /**
     * Where the input's own value of a property Settle sets is kept: {@code settle.input.REAL_TOPIC}. A producer to the
     * input topic chooses its properties, so a letter never takes Settle's names from it (issue 40: a letter whose
     * input carried {@code REAL_TOPIC=payments} was replayed to {@code payments}).
     */
    public static final String INPUT_PREFIX = PREFIX + "input.";

    private static final Pattern COUNT = Pattern.compile("[0-9]{1,9}");

    /** A message is cut here: enough to read, short of bloating every dead letter's metadata. */
    public static final int MESSAGE_CHARS = 1_000;
    /** A stack trace is cut here: the top frames and the first causes are what a reader needs. */
    static final int STACKTRACE_CHARS = 8_000;

    /** Where {@link #instance()} is read from, first set first. */
    private static final List<String> INSTANCE_VARIABLES = List.of("POD_NAME", "HOSTNAME");

    private static final String INSTANCE_NAME = instanceName();

    private DeadLetterProperties() {}

    /**
     * Why a delivery failed on its last attempt, as a letter says it: the stage's label and, when something was
     * thrown, its class, its message and a printable throwable for its stack (the driver reads them from its failure:
     * a handler's exception may throw when read, issue 41).
     *
     * @param exceptionClass the class of what was thrown; empty for a stage without a cause ({@code retry})
     * @param exceptionMessage its message; empty when it had none
     * @param printable what its stack trace is printed from; empty exactly when {@code exceptionClass} is
     */
    public record Cause(
            String stage,
            Optional<String> exceptionClass,
            Optional<String> exceptionMessage,
            Optional<Throwable> printable) {}

    /**
     * Settle's properties for a delivery that failed on its last attempt.
     *
     * @param firstAttemptMillis when the message's first attempt failed; empty when this process did not see it (a
     *     restart, another replica), and the property is then left out
     * @param lastAttemptMillis when the last attempt failed
     * @param code the handler or function class
     * @param stackTrace whether to add the (capped) stack trace
     */
    public static Map<String, String> of(
            Cause why,
            int attempts,
            OptionalLong firstAttemptMillis,
            long lastAttemptMillis,
            String subscription,
            String code,
            boolean stackTrace) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put(STAGE, why.stage());
        why.exceptionClass().ifPresent(name -> properties.put(EXCEPTION_CLASS, name));
        why.exceptionMessage().ifPresent(message -> properties.put(EXCEPTION_MESSAGE, capped(message, MESSAGE_CHARS)));
        if (stackTrace) {
            why.printable().ifPresent(printable -> {
                StringWriter text = new StringWriter();
                printable.printStackTrace(new PrintWriter(text));
                properties.put(EXCEPTION_STACKTRACE, capped(text.toString(), STACKTRACE_CHARS));
            });
        }
        properties.put(ATTEMPTS, Integer.toString(attempts));
        firstAttemptMillis.ifPresent(millis ->
                properties.put(FIRST_ATTEMPT_TIME, Instant.ofEpochMilli(millis).toString()));
        properties.put(
                LAST_ATTEMPT_TIME, Instant.ofEpochMilli(lastAttemptMillis).toString());
        properties.put(SUBSCRIPTION, subscription);
        properties.put(CODE, code);
        properties.put(INSTANCE, INSTANCE_NAME);
        return properties;
    }

    /**
     * The properties of Settle's dead letter of a message: the input's own properties, then the origin and {@code
     * settleProperties}, always Settle's own. Of the names Settle owns ({@code REAL_TOPIC}, {@code REAL_SUBSCRIPTION},
     * {@code ORIGIN_MESSAGE_ID} and every {@code settle.} one), the input's values are kept as {@code
     * settle.input.<name>}; taken from the input are {@link #REPLAY_COUNT}, the replay loop's guard, as a whole
     * number (anything else counts as 0), and a re-driven copy's {@code settle.held.*} ({@link #redriven}), the
     * earlier cause its letter carries beside its own.
     *
     * @param input the properties the consumed message carried
     * @param topic the topic it was consumed from
     * @param messageId its id there
     */
    public static Map<String, String> letter(
            Map<String, String> input,
            String topic,
            String subscription,
            String messageId,
            Map<String, String> settleProperties) {
        Map<String, String> letter = new LinkedHashMap<>();
        // A re-driven copy's hold is kept as it is: its letter carries the earlier cause beside its own.
        boolean redriven = isRedriven(input);
        input.forEach((name, value) -> {
            if (ownedBySettle(name) && !(redriven && name.startsWith(HELD_PREFIX))) {
                letter.put(INPUT_PREFIX + name, value);
            } else {
                letter.put(name, value);
            }
        });
        String count = input.get(REPLAY_COUNT);
        if (count != null) {
            letter.put(REPLAY_COUNT, Integer.toString(replayCount(input)));
            if (letter.get(REPLAY_COUNT).equals(count)) {
                letter.remove(INPUT_PREFIX + REPLAY_COUNT);
            }
        }
        letter.put(REAL_TOPIC, topic);
        letter.put(REAL_SUBSCRIPTION, subscription);
        letter.put(ORIGIN_MESSAGE_ID, messageId);
        letter.putAll(settleProperties);
        return letter;
    }

    /**
     * The properties of a letter's copy sent back to its topic by {@code settle dlq replay}: the original's own, as
     * the letter kept them; Settle's names (the cause, the client's three, {@code settle.input.*}) describe the last
     * failure, not the message, and are left out; the replay count goes with it one higher, so the next letter,
     * copying it, carries it on.
     */
    public static Map<String, String> replayed(Map<String, String> letter) {
        Map<String, String> sent = new LinkedHashMap<>();
        letter.forEach((name, value) -> {
            if (!ownedBySettle(name)) {
                sent.put(name, value);
            }
        });
        sent.put(REPLAY_COUNT, Integer.toString(replayCount(letter) + 1));
        return sent;
    }

    /**
     * The properties of a held copy's re-drive to its topic: the original's own, as the held copy kept them, its
     * replay count unchanged (a re-drive is not a replay), the origin id its story goes by ({@link Origin}), and the
     * hold: which code held it, and why ({@code settle.held.*}); Settle's other names describe the hold and are left
     * out, as a replay leaves them.
     */
    public static Map<String, String> redriven(Map<String, String> held) {
        Map<String, String> sent = new LinkedHashMap<>();
        held.forEach((name, value) -> {
            if (!ownedBySettle(name)) {
                sent.put(name, value);
            }
        });
        if (held.containsKey(REPLAY_COUNT)) {
            sent.put(REPLAY_COUNT, Integer.toString(replayCount(held)));
        }
        String origin = Origin.ofLetter(held);
        if (!origin.isEmpty()) {
            sent.put(Origin.PROPERTY, origin);
        }
        held.forEach((name, value) -> {
            if (name.startsWith(HELD_PREFIX)) {
                sent.put(name, value);
            }
        });
        HELD_CAUSE.forEach((name, heldName) -> {
            String value = held.get(name);
            if (value != null) {
                sent.put(heldName, value);
            }
        });
        return sent;
    }

    /**
     * Whether a message is a re-drive's copy of a held one (it names the generation that held it): at its cap it goes
     * to the dead-letter topic with both causes, never to the held topic again, so a hold cannot loop.
     */
    public static boolean isRedriven(Map<String, String> properties) {
        return properties.containsKey(HELD_GENERATION);
    }

    /**
     * Whether {@code letter} is one of {@code subscription}'s, for subscriptions sharing a dead-letter topic: Settle's
     * letters name it in {@link #SUBSCRIPTION}, the Pulsar client's in {@link #REAL_SUBSCRIPTION}. A letter naming
     * no subscription at all is everyone's, so that no letter is hidden from every subscription.
     */
    public static boolean belongsTo(Map<String, String> letter, String subscription) {
        String named = letter.getOrDefault(SUBSCRIPTION, letter.get(REAL_SUBSCRIPTION));
        return named == null || named.equals(subscription);
    }

    /** Whether Settle sets this property on its letters itself, whatever the input carried. */
    static boolean ownedBySettle(String name) {
        return name.startsWith(PREFIX)
                || name.equals(REAL_TOPIC)
                || name.equals(REAL_SUBSCRIPTION)
                || name.equals(ORIGIN_MESSAGE_ID);
    }

    /**
     * The {@link #REPLAY_COUNT} of a letter or a message: a whole number of up to nine digits; anything else (absent,
     * negative, signed, spaced, too long) counts as 0, so such a letter is replayed and then parked, never looped.
     */
    public static int replayCount(Map<String, String> properties) {
        String count = properties.get(REPLAY_COUNT);
        return count != null && COUNT.matcher(count).matches() ? Integer.parseInt(count) : 0;
    }

    /** {@code text}, cut to {@code max} characters, saying at the end that it was cut and from how many. */
    static String capped(String text, int max) {
        if (text.length() <= max) {
            return text;
        }
        String cut = "... (cut to " + max + " of " + text.length() + " characters)";
        return text.substring(0, Math.max(0, max - cut.length())) + cut;
    }

    /** This instance as letters name it ({@link #INSTANCE}): the pod's name on Kubernetes, else the host's. */
    public static String instance() {
        return INSTANCE_NAME;
    }

    /**
     * The pod's name on Kubernetes, else the host's: {@code POD_NAME} (the chart sets it from the pod's {@code
     * metadata.name} through the downward API), then {@code HOSTNAME} (the pod's name too, unless the pod sets {@code
     * hostname:} or runs on the host's network), then the host's name.
     */
    private static String instanceName() {
        return instanceName(System::getenv, DeadLetterProperties::localHostName);
    }

    static String instanceName(UnaryOperator<String> env, Supplier<String> hostName) {
        for (String variable : INSTANCE_VARIABLES) {
            String value = env.apply(variable);
            if (value != null && !value.isBlank()) {
                return value.strip();
            }
        }
        return hostName.get();
    }

    private static String localHostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "unknown";
        }
    }
}
