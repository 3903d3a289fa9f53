package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.SendTrace;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.MessageId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription's dead letters, from the settlement's decision ("this delivery goes to the dead-letter topic, with
 * this cause") until its original can be settled (docs/dead-letters.md): the cap, when each failing message first
 * failed, the letter's properties ({@link DeadLetterProperties}), its span, the letter counted as a pending send
 * ({@code maxPendingOutputs}), written outside a transaction or in one of its own with the original's acknowledgement
 * (exactly-once), and the duplicate guard told while it is being written. {@link Settlement} then makes the consumer
 * call that {@link Stored} names: the one outcome → consumer-call mapping stays there.
 *
 * <p>What becomes of a letter is its {@link OnCap} part's: the dead-letter topic, or with {@code onCap: hold} the held
 * topic ({@link HeldForFix}), written the same way ({@link #holding}).
 *
 * <p>Three kinds, chosen once: {@link #byClient} (the Pulsar client's policy writes every letter, without a cause),
 * {@link #acknowledged} (at-least-once: the letter is stored, then the original acknowledged) and {@link #committed}
 * (exactly-once: the letter and the acknowledgement commit together), picked by the subscription's
 * {@link SettlementStrategy}. It is the part in the pipeline's "hold-for-fix or dead letter" slot, and its cap is the
 * pipeline's cap slot ({@link #cap()}): one cap. Thread-safe.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
final class DeadLettering<M> implements Pipeline.Part {
    private static final Logger log = LoggerFactory.getLogger(DeadLettering.class);

    /** First-failure times kept for dead letters: a few seconds of a backlog failing at full speed. */
    static final int FIRST_FAILURES_REMEMBERED = 10_000;

    /** What the settlement does with the original once its letter is settled one way or the other. */
    enum Stored {
        /** The letter is stored: acknowledge the original. */
        STORED,
        /** The letter is stored and the original acknowledged with it, in one transaction: nothing more to do. */
        COMMITTED,
        /**
         * The letter was discarded with its transaction because the broker refused the original's acknowledgement in
         * it as a conflict: another copy of the message settled it or is settling it. Leave the original alone.
         */
        LEFT_TO_ITS_TWIN,
        /** The letter was not stored: negatively acknowledge the original, so it comes back and nothing is lost. */
        NOT_STORED
    }

    /**
     * Told when a copy of a message is to be dead-lettered by Settle (its letter written now, or when its last
     * attempt's hold ends) and when that is over: the duplicate guard holds the copy's twin back meanwhile, so the
     * handler does not run a {@code maxAttempts + 1}-th time and write a second letter (issue 41).
     */
    interface LetterWatch<M> {
        /** {@code message}'s copy is to be dead-lettered; told once or more before {@link #lettered}. */
        void lettering(M message);

        /**
         * {@code message}'s copy is no longer being dead-lettered: {@code acknowledged} when its letter was stored and
         * the copy acknowledged (or committed with it); false when it was negatively acknowledged or left alone.
         */
        void lettered(M message, boolean acknowledged);

        /** A watch that is told nothing. */
        static <M> LetterWatch<M> none() {
            return new LetterWatch<>() {
                @Override
                public void lettering(M message) {}

                @Override
                public void lettered(M message, boolean acknowledged) {}
            };
        }
    }

    /**
     * Writes a letter in a transaction of its own together with its original's acknowledgement ({@code
     * CommitStage.commitLetter}); completes once committed.
     */
    interface LetterCommits<M> {
        CompletionStage<?> commit(UnitOfWork<M> work, Function<UnitOfWork<M>, CompletionStage<?>> write);
    }

    private final String subscription;
    private final Optional<DeadLetter> deadLetter;
    /** When a delivery is on its last attempt: the pipeline's cap slot, from the dead-letter policy. */
    private final Pipeline.Cap cap;
    /**
     * Whether Settle writes the letters it has a cause for (it has a writer and a cap), decided once: false when the
     * client's policy writes every letter, and then nothing below runs.
     */
    private final boolean settleWrites;

    private final DeadLetterWriter<M> writer;
    /** The writer as given, before {@link CopyCommits#letters}; and the subscription: for {@link #holding}. */
    private final DeadLetterWriter<M> plainWriter;

    private final SubscriptionSpec spec;
    /**
     * How a letter is written through a writer (as it is, or in a transaction of its own: exactly-once), counted while
     * it is.
     */
    private final CopyWrites<M> writes;
    /** What becomes of a letter: the dead-letter topic, or the held topic ({@code onCap: hold}). */
    private final OnCap<M> onCap;
    /** The held topic's writer, written through as {@link #writes} says. */
    private final DeadLetterWriter<M> heldWriter;

    private final LetterWatch<M> watch;
    /** Names the handler or function in dead letters; read when one is written (a swap changes it). */
    private final Supplier<String> code;

    private final Time time;
    /** The dead-lettered line: one every 10 s at most, as the failure line, with the count of those left out. */
    private final LogThrottle lines;
    /**
     * When each failing message's first attempt failed here, for its dead letter; bounded, as a message that fails
     * once and then succeeds leaves its entry until it is pushed out. Guarded by itself.
     */
    private final Map<Object, Long> firstFailures = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Object, Long> eldest) {
            return size() > FIRST_FAILURES_REMEMBERED;
        }
    };

    private DeadLettering(
            SubscriptionSpec spec,
            DeadLetterWriter<M> writer,
            CopyWrites<M> writes,
            OnCap<M> onCap,
            LetterWatch<M> watch,
            Supplier<String> code,
            Time time) {
        this.subscription = spec.name();
        this.deadLetter = spec.deadLetter();
        this.cap = deadLetter.map(Pipeline.Cap::of).orElse(Pipeline.Cap.NONE);
        this.settleWrites = writer != null && deadLetter.isPresent();
        this.spec = spec;
        this.plainWriter = writer;
        this.writes = writes;
        this.writer = writer == null ? null : writes.commits().letters(writer);
        this.onCap = onCap;
        this.heldWriter = writes.commits().letters(onCap.writer());
        this.watch = watch;
        this.code = code;
        this.time = time;
        this.lines = new LogThrottle(time);
    }

    /** The Pulsar client's dead-letter policy writes every letter of {@code spec} (without a cause). */
    static <M> DeadLettering<M> byClient(SubscriptionSpec spec, Time time) {
        return new DeadLettering<>(
                spec,
                null,
                new CopyWrites<>(CopyCommits.acknowledged(), null, time),
                OnCap.deadLetter(),
                LetterWatch.none(),
                () -> "",
                time);
    }

    /**
     * At-least-once: Settle writes the letters it has a cause for through {@code writer}, each counted in {@code
     * pending} until stored, and the original is acknowledged once it is.
     */
    static <M> DeadLettering<M> acknowledged(
            SubscriptionSpec spec,
            DeadLetterWriter<M> writer,
            PendingOutputs pending,
            LetterWatch<M> watch,
            Supplier<String> code,
            Time time) {
        return written(spec, writer, CopyCommits.acknowledged(), pending, watch, code, time);
    }

    /**
     * Exactly-once: each letter is written through {@code writer} in a transaction of its own with its original's
     * acknowledgement ({@code commits}), so a crash or a failure between the two never writes a letter twice nor loses
     * one. A transaction of its own, not the failed attempt's: that one is aborted, so that none of the attempt's
     * outputs is ever read, and the letter and acknowledgement must not go down with them ({@link CopyCommits}).
     */
    static <M> DeadLettering<M> committed(
            SubscriptionSpec spec,
            DeadLetterWriter<M> writer,
            LetterCommits<M> commits,
            PendingOutputs pending,
            LetterWatch<M> watch,
            Supplier<String> code,
            Time time) {
        return written(spec, writer, CopyCommits.committed(commits), pending, watch, code, time);
    }

    /**
     * Settle writes the letters it has a cause for through {@code writer}, as {@code commits} say ({@link #acknowledged}
     * or {@link #committed}), each counted in {@code pending} until stored.
     */
    static <M> DeadLettering<M> written(
            SubscriptionSpec spec,
            DeadLetterWriter<M> writer,
            CopyCommits<M> commits,
            PendingOutputs pending,
            LetterWatch<M> watch,
            Supplier<String> code,
            Time time) {
        return new DeadLettering<>(
                spec, writer, new CopyWrites<>(commits, pending, time), OnCap.deadLetter(), watch, code, time);
    }

    /**
     * These dead letters with {@code part} deciding what becomes of each letter ({@code onCap}): a held copy is
     * written as a letter is, through the part's writer (at exactly-once in a transaction of its own with the
     * original's acknowledgement). Told before the subscription starts; the client's letters ({@link #byClient}) stay
     * as they are.
     */
    DeadLettering<M> holding(OnCap<M> part) {
        if (!settleWrites || part == onCap) {
            return this;
        }
        return new DeadLettering<>(spec, plainWriter, writes, part, watch, code, time);
    }

    /** The cap: whether {@code work} is its message's last attempt, after which it goes to the dead-letter topic. */
    boolean capReached(UnitOfWork<M> work) {
        return cap.isLastAttempt(work.attempt());
    }

    /** The cap, which fills the pipeline's cap slot too: {@code maxAttempts}, or none. */
    Pipeline.Cap cap() {
        return cap;
    }

    @Override
    public String describe() {
        return deadLetter
                .map(dlq -> "dead letters to " + dlq.topic()
                        + (settleWrites
                                ? ", written by Settle with their cause"
                                : ", written by the Pulsar client's policy")
                        + (onCap.describe().isEmpty() ? "" : "; " + onCap.describe()))
                .orElse("none");
    }

    /** Whether Settle writes {@code work}'s letter when it is redelivered: a last attempt that failed with a cause. */
    boolean writes(UnitOfWork<M> work) {
        if (!settleWrites || !capReached(work)) {
            return false;
        }
        Optional<Failure> why = work.failure();
        return why.isPresent() && why.get().stage() != Failure.Stage.ACK_TIMEOUT;
    }

    /**
     * The settlement decided that {@code work}, its message's last attempt, goes to the dead-letter topic: said in the
     * log (issue 50: the failure line is rate-limited, so without this the log's last word on a message was often "it
     * will be retried"), at most one line a subscription every 10 s, with the count of those left out.
     */
    boolean goes(UnitOfWork<M> work) {
        boolean held = writes(work) && onCap.holds(work);
        long left = lines.admit();
        if (left < 0) {
            return held;
        }
        Optional<Failure> why = work.failure();
        log.warn(
                "subscription '{}': message {} goes to the {} after its last attempt (attempt {}, stage {}, {}); {}{}",
                subscription,
                work.id(),
                held
                        ? "held topic " + onCap.topic() + " (onCap: hold), until another generation of the code serves"
                                + " every key,"
                        : "dead-letter topic "
                                + deadLetter.map(DeadLetter::topic).orElse("(none)"),
                work.attempt(),
                why.map(failure -> failure.stage().label()).orElse("none"),
                why.flatMap(Failure::exception).map(PrintableThrowable::classOf).orElse("no exception"),
                writes(work)
                        ? "Settle writes its letter, with the cause"
                        : why.isPresent() && why.get().stage() == Failure.Stage.ACK_TIMEOUT
                                ? "the Pulsar client writes its letter, without a cause, once the ack timeout brings"
                                        + " it back"
                                : "the Pulsar client writes its letter, without a cause",
                left == 0 ? "" : " (" + left + " more dead-lettered in the last 10 s not logged)");
        return held;
    }

    /** {@code work} failed, or was retried: when its first attempt did, remembered for its letter. */
    void failedOnce(UnitOfWork<M> work) {
        // Not known for a message whose first attempt another process (or life) saw.
        if (!settleWrites || work.attempt() != 1) {
            return;
        }
        long now = time.currentTimeMillis();
        synchronized (firstFailures) {
            firstFailures.putIfAbsent(work.id(), now);
        }
    }

    /** {@code message}'s letter is due when its last attempt's hold ends: its twin is held back meanwhile. */
    void lettering(M message) {
        watch.lettering(message);
    }

    /** {@code message}'s letter, due when its hold ended, is not written (a stop abandoned the hold). */
    void notLettered(M message) {
        watch.lettered(message, false);
    }

    /**
     * Writes the dead letter of {@code work}, whose last attempt failed ({@code why}), and tells {@code settle} what is
     * left to do with the original once the letter is settled one way or the other: on the thread that completes it,
     * before the duplicate guard lets the copy's twin through.
     */
    void write(UnitOfWork<M> work, Failure why, Consumer<Stored> settle) {
        Map<String, String> properties = properties(work, why);
        boolean held = onCap.holds(work);
        if (held) {
            properties = new LinkedHashMap<>(properties);
            properties.putAll(onCap.tags(work));
        }
        DeadLetterWriter<M> to = held ? heldWriter : writer;
        Tracing.Handling trace = work.trace();
        SendTrace.Sending span = null;
        if (trace != null) {
            // The letter carries its own span's context over the original's, so a replay continues this trace.
            span = trace.deadLetter(held ? onCap.topic() : deadLetter.get().topic());
            properties = new LinkedHashMap<>(properties);
            properties.putAll(span.properties());
        }
        // Before the letter is sent: its copy's twin is held back until it is settled.
        watch.lettering(work.message());
        Map<String, String> letter = properties;
        SendTrace.Sending letterSpan = span;
        writes.write(() -> to.write(work, letter), (stored, error) -> {
            if (letterSpan != null) {
                letterSpan.sent(stored instanceof MessageId id ? id : null, error);
            }
            if (error == null && held) {
                onCap.held(work);
            }
            try {
                settle.accept(
                        error == null
                                ? writes.commits().whenStored()
                                : notStored(
                                        work,
                                        error,
                                        held ? onCap.topic() : deadLetter.get().topic()));
            } finally {
                watch.lettered(work.message(), error == null);
            }
        });
    }

    private Stored notStored(UnitOfWork<M> work, Throwable error, String topic) {
        if (writes.commits().leftToItsTwin(error)) {
            // Issue 41: the broker refuses a transaction's acknowledgement of an input that is acknowledged already or
            // held by another transaction, so another copy of this message settled it or is settling it. A negative
            // acknowledgement would send it round again while that copy settles it; the broker itself delivers it
            // again if that copy's transaction aborts (PendingAckHandleImpl.handleAbort redelivers what it held).
            log.info(
                    "subscription '{}': the dead letter of message {} was discarded with its transaction: the broker"
                            + " refused the message's acknowledgement in it as a conflict, so another copy of it has"
                            + " settled it or holds it in its own transaction. The message is left alone: that copy"
                            + " settles it, or the broker delivers it again if that copy's transaction aborts",
                    subscription,
                    work.id());
            return Stored.LEFT_TO_ITS_TWIN;
        }
        log.warn(
                "subscription '{}': the dead letter of message {} was not stored in {}; it is negatively"
                        + " acknowledged instead, so it is delivered again (at at-least-once the Pulsar client"
                        + " writes its own copy, without the cause, instead)",
                subscription,
                work.id(),
                topic,
                error);
        return Stored.NOT_STORED;
    }

    /** Settle's properties for {@code work}'s letter: why, when, where. */
    private Map<String, String> properties(UnitOfWork<M> work, Failure why) {
        Long first;
        synchronized (firstFailures) {
            first = firstFailures.remove(work.id());
        }
        Map<String, String> properties = DeadLetterProperties.of(
                cause(why),
                work.attempt(),
                first == null ? OptionalLong.empty() : OptionalLong.of(first),
                time.currentTimeMillis(),
                subscription,
                code.get(),
                deadLetter.get().stackTrace());
        if (work.keyPassedBy() > 0) {
            // The gap in its key's order, as the key hold saw it: its later messages that went first.
            properties = new LinkedHashMap<>(properties);
            properties.put(DeadLetterProperties.KEY_PASSED, Integer.toString(work.keyPassedBy()));
        }
        return properties;
    }

    /** A failure as a letter says it; a handler's exception may throw when read (issue 41): a stand-in's stack. */
    static DeadLetterProperties.Cause cause(Failure why) {
        return new DeadLetterProperties.Cause(
                why.stage().label(),
                why.exception().map(PrintableThrowable::classOf),
                why.exception().map(PrintableThrowable::messageOf),
                Optional.ofNullable(why.printableCause()));
    }

    /**
     * The stop's: waits up to {@code timeout} until no dead letter is being written (each then has its original
     * settled, before the consumer closes); whether none is.
     */
    boolean awaitNone(Duration timeout) throws InterruptedException {
        return !settleWrites || writes.awaitNone(timeout);
    }
}
