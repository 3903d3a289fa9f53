package dev.settle.runtime.journal;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deadletter.Origin;
import dev.settle.runtime.driver.Failure;
import dev.settle.runtime.driver.Journal;
import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.time.Time;
import java.security.DigestException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.impl.BatchMessageIdImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.MessageImpl;
import org.apache.pulsar.client.impl.TopicMessageImpl;
import org.apache.pulsar.shade.io.netty.buffer.ByteBuf;

/**
 * One subscription's side of the journal: makes the record of each settled delivery and offers it to the
 * subscription's {@link JournalWriter}. The cost on the message path is the payload's SHA-256 and the record's
 * encoding into the writer's open body (a {@link Draft} per thread, no record made). Thread-safe.
 */
public final class SubscriptionJournal implements Journal {
    private static final Pattern GENERATION = Pattern.compile("generation ([0-9]{1,9})");
    private static final Pattern TRACEPARENT = Pattern.compile("[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}");
    /** Each outcome's label, made once: {@code Settled.label()} lower-cases its name on each call. */
    private static final String[] OUTCOMES =
            Arrays.stream(Settled.values()).map(Settled::label).toArray(String[]::new);
    /** The outcome of a call's beginning ({@code journalPerHandling: true}). */
    static final String HANDLING = "handling";
    /** One draft per settling thread, filled and encoded per settlement. */
    private static final ThreadLocal<Draft> DRAFTS = ThreadLocal.withInitial(Draft::new);

    private final String subscription;
    private final Optional<DeadLetter> deadLetter;
    private final JournalWriter writer;
    private final Time time;
    private final String instance;
    private final boolean perHandling;
    /** The last code's generation: the code changes only when live code swaps, so its pattern runs once a swap. */
    private volatile CodeGeneration lastCode = new CodeGeneration(null, 0);

    private record CodeGeneration(String code, int generation) {}

    public SubscriptionJournal(String subscription, Optional<DeadLetter> deadLetter, JournalWriter writer, Time time) {
        this(subscription, deadLetter, writer, time, false);
    }

    /** With {@code perHandling}, each handler call's beginning is recorded too ({@code journalPerHandling: true}). */
    public SubscriptionJournal(
            String subscription,
            Optional<DeadLetter> deadLetter,
            JournalWriter writer,
            Time time,
            boolean perHandling) {
        this(subscription, deadLetter, writer, time, DeadLetterProperties.instance(), perHandling);
    }

    SubscriptionJournal(
            String subscription, Optional<DeadLetter> deadLetter, JournalWriter writer, Time time, String instance) {
        this(subscription, deadLetter, writer, time, instance, false);
    }

    SubscriptionJournal(
            String subscription,
            Optional<DeadLetter> deadLetter,
            JournalWriter writer,
            Time time,
            String instance,
            boolean perHandling) {
        this.subscription = subscription;
        this.deadLetter = deadLetter;
        this.writer = writer;
        this.time = time;
        this.instance = instance;
        this.perHandling = perHandling;
    }

    @Override
    public boolean perHandling() {
        return perHandling;
    }

    /**
     * The record of a call's beginning: outcome {@code handling}, no failure, no timing and no payload hash (its
     * settlement's record has it), so a call its runtime died in is still a step of the story.
     */
    @Override
    public void handling(UnitOfWork<Message<?>> work, String code) {
        try {
            Draft draft = DRAFTS.get();
            draft.at = time.currentTimeMillis();
            identify(draft, work, code);
            draft.outcome = HANDLING;
            draft.deadLetterTopic = null;
            draft.failureStage = null;
            draft.causeClass = null;
            draft.handlingMicros = 0;
            draft.hasSha256 = false;
            draft.transaction = null;
            writer.offer(draft);
        } catch (RuntimeException e) {
            writer.lostOne();
        }
    }

    @Override
    public void settled(UnitOfWork<Message<?>> work, Settled how, String code, long handlingNanos, boolean committed) {
        settled(work, how, code, handlingNanos, committed, time.nanoTime());
    }

    /**
     * The record's time is the wall clock at {@code settledNanos}, from the writer's reading of both clocks at its
     * last flush ({@link JournalWriter#wallMillis}): reading the wall clock for each record was a sixth of the
     * journal's CPU samples in the no-op benchmark (docs/benchmarks.md).
     */
    @Override
    public void settled(
            UnitOfWork<Message<?>> work,
            Settled how,
            String code,
            long handlingNanos,
            boolean committed,
            long settledNanos) {
        try {
            Draft draft = DRAFTS.get();
            draft.at = writer.wallMillis(settledNanos);
            fill(draft, work, how, code, handlingNanos, committed);
            writer.offer(draft);
        } catch (RuntimeException e) {
            // The journal never fails a settlement: a message whose record cannot be made is counted as dropped.
            writer.lostOne();
        }
    }

    private void fill(
            Draft d, UnitOfWork<Message<?>> work, Settled how, String code, long handlingNanos, boolean committed) {
        Message<?> message = identify(d, work, code);
        Optional<Failure> failure = work.failure();
        String outcome = OUTCOMES[how.ordinal()];
        String letterTopic = null;
        if (deadLetter.isPresent() && deadLetter.get().isLastAttempt(work.attempt()) && redelivers(how)) {
            // The last attempt asked for the message again: the cap sends it to the dead-letter topic instead.
            outcome = "dead_lettered";
            letterTopic = deadLetter.get().topic();
        }
        d.outcome = outcome;
        d.deadLetterTopic = letterTopic;
        d.failureStage = failure.isPresent() ? failure.get().stage().label() : null;
        d.causeClass = failure.isPresent()
                ? failure.get().exception().map(SubscriptionJournal::className).orElse(null)
                : null;
        d.handlingMicros = handlingNanos / 1_000;
        payloadSha256(d.digest, message, d.sha256);
        d.hasSha256 = true;
        d.transaction = work.transaction().isPresent() ? (committed ? "committed" : "aborted") : null;
    }

    /** The fields every record has but its time: which message and its story, where and by what code; its message. */
    private Message<?> identify(Draft d, UnitOfWork<Message<?>> work, String code) {
        Message<?> message = work.message();
        MessageId id = message.getMessageId();
        d.subscription = subscription;
        d.topic = message.getTopicName();
        d.messageId = id;
        d.messageIdText = id.getClass() == MessageIdImpl.class || id.getClass() == BatchMessageIdImpl.class
                ? null
                : id.toString();
        // Its own topic@messageId unless it carries another (Origin): written then only, so never made as text here.
        // Read once: Pulsar's getProperty takes the message's lock each call.
        Map<String, String> properties = message.getProperties();
        String carried = properties.get(Origin.PROPERTY);
        d.origin = carried != null && !carried.isBlank() ? carried : null;
        d.key = message.hasKey() ? message.getKey() : null;
        d.attempt = work.attempt();
        d.code = code;
        d.generation = generationOf(code);
        d.instance = instance;
        d.traceId = traceId(properties.get("traceparent"));
        return message;
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
        byte[] digest = new byte[JournalBatch.SHA_256_BYTES];
        sha256(Draft.sha256(), payload, digest);
        return JournalBatch.hex(digest, 0, digest.length);
    }

    /**
     * The SHA-256 of {@code message}'s payload into {@code digest}, read where the client holds it: {@code getData()}
     * copies a payload held in a direct buffer (an unbatched message's, as Pulsar 4.2.4's consumer receives it) into a
     * new array on each call; a batched one it already copied to an array of its own when it split the batch.
     */
    static void payloadSha256(MessageDigest sha, Message<?> message, byte[] digest) {
        Message<?> own = message instanceof TopicMessageImpl<?> fromMany ? fromMany.getMessage() : message;
        if (!(own instanceof MessageImpl<?> received)) {
            sha256(sha, message.getData(), digest);
            return;
        }
        ByteBuf payload = received.getDataBuffer();
        int length = payload.readableBytes();
        if (payload.hasArray()) {
            sha.update(payload.array(), payload.arrayOffset() + payload.readerIndex(), length);
        } else if (length > 0) {
            // Copied a chunk at a time into the digest's own buffer, made once: no array a message.
            sha.update(payload.nioBuffer(payload.readerIndex(), length));
        }
        finish(sha, digest);
    }

    /** The SHA-256 of a payload into {@code digest}: no array made for it. */
    private static void sha256(MessageDigest sha, byte[] payload, byte[] digest) {
        if (payload != null) {
            sha.update(payload);
        }
        finish(sha, digest);
    }

    private static void finish(MessageDigest sha, byte[] digest) {
        try {
            sha.digest(digest, 0, digest.length);
        } catch (DigestException impossible) {
            throw new IllegalStateException("a SHA-256 is 32 bytes", impossible);
        }
    }
}
