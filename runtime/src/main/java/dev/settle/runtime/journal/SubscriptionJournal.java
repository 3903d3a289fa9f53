package dev.settle.runtime.journal;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deadletter.Origin;
import dev.settle.runtime.driver.Failure;
import dev.settle.runtime.driver.Journal;
import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.time.Time;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.api.Message;

/**
 * One subscription's side of the journal: makes the record of each settled delivery and offers it to the
 * subscription's {@link JournalWriter}. The cost on the message path is the record, the payload's SHA-256 and one
 * non-blocking offer. Thread-safe.
 */
public final class SubscriptionJournal implements Journal {
    private static final Pattern GENERATION = Pattern.compile("generation ([0-9]{1,9})");
    private static final Pattern TRACEPARENT = Pattern.compile("[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}");
    private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    /** One digest per settling thread: looking SHA-256 up per message cost more than hashing a small payload. */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("every Java runtime has SHA-256", impossible);
        }
    });

    private final String subscription;
    private final Optional<DeadLetter> deadLetter;
    private final JournalWriter writer;
    private final Time time;
    private final String instance;
    /** The last code's generation: the code changes only when live code swaps, so its pattern runs once a swap. */
    private volatile CodeGeneration lastCode = new CodeGeneration(null, 0);

    private record CodeGeneration(String code, int generation) {}

    public SubscriptionJournal(String subscription, Optional<DeadLetter> deadLetter, JournalWriter writer, Time time) {
        this(subscription, deadLetter, writer, time, DeadLetterProperties.instance());
    }

    SubscriptionJournal(
            String subscription, Optional<DeadLetter> deadLetter, JournalWriter writer, Time time, String instance) {
        this.subscription = subscription;
        this.deadLetter = deadLetter;
        this.writer = writer;
        this.time = time;
        this.instance = instance;
    }

    @Override
    public void settled(UnitOfWork<Message<?>> work, Settled how, String code, long handlingNanos, boolean committed) {
        try {
            writer.offer(record(work, how, code, handlingNanos, committed));
        } catch (RuntimeException e) {
            // The journal never fails a settlement: a message whose record cannot be made is counted as dropped.
            writer.lostOne();
        }
    }

    JournalRecord record(UnitOfWork<Message<?>> work, Settled how, String code, long handlingNanos, boolean committed) {
        Message<?> message = work.message();
        String topic = message.getTopicName();
        String id = message.getMessageId().toString();
        Optional<Failure> failure = work.failure();
        String outcome = how.label();
        String letterTopic = null;
        if (deadLetter.isPresent() && deadLetter.get().isLastAttempt(work.attempt()) && redelivers(how)) {
            // The last attempt asked for the message again: the cap sends it to the dead-letter topic instead.
            outcome = "dead_lettered";
            letterTopic = deadLetter.get().topic();
        }
        String transaction = null;
        if (work.transaction().isPresent()) {
            transaction = committed ? "committed" : "aborted";
        }
        return new JournalRecord(
                time.currentTimeMillis(),
                subscription,
                topic,
                id,
                Origin.ofMessage(message.getProperties(), topic, id),
                message.hasKey() ? message.getKey() : null,
                work.attempt(),
                code,
                generationOf(code),
                instance,
                outcome,
                letterTopic,
                failure.map(f -> f.stage().label()).orElse(null),
                failure.flatMap(Failure::exception)
                        .map(SubscriptionJournal::className)
                        .orElse(null),
                handlingNanos / 1_000,
                traceId(message.getProperty("traceparent")),
                sha256(message.getData()),
                transaction);
    }

    /** Whether the outcome asks for the message again, which on its last attempt dead-letters it. */
    private static boolean redelivers(Settled how) {
        return how == Settled.RETRY || how == Settled.RETRY_AFTER || how == Settled.ERROR || how == Settled.REFUSED;
    }

    /** The class only: an exception's message may hold the payload's data. */
    private static String className(Throwable thrown) {
        return thrown.getClass().getName();
    }

    private int generationOf(String code) {
        CodeGeneration last = lastCode;
        if (Objects.equals(last.code(), code)) {
            return last.generation();
        }
        int generation = generation(code);
        lastCode = new CodeGeneration(code, generation);
        return generation;
    }

    static int generation(String code) {
        if (code == null) {
            return 0;
        }
        Matcher m = GENERATION.matcher(code);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    static String traceId(String traceparent) {
        if (traceparent == null) {
            return null;
        }
        Matcher m = TRACEPARENT.matcher(traceparent.strip());
        return m.matches() ? m.group(1) : null;
    }

    /** The SHA-256 of a payload, in lower-case hex. */
    public static String sha256(byte[] payload) {
        byte[] digest = SHA_256.get().digest(payload == null ? new byte[0] : payload);
        // By hand: HexFormat.formatHex was a third of the record's making in the no-op benchmark's profile.
        byte[] hex = new byte[digest.length * 2];
        for (int i = 0; i < digest.length; i++) {
            hex[2 * i] = HEX_DIGITS[(digest[i] >> 4) & 0xf];
            hex[2 * i + 1] = HEX_DIGITS[digest[i] & 0xf];
        }
        return new String(hex, StandardCharsets.ISO_8859_1);
    }
}
