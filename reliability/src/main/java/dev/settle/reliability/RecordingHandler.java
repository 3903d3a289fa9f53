package dev.settle.reliability;

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import dev.settle.sdk.Publisher;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The reliability suite's handler: each message's value is its sequence number, and every call is written to the
 * file named by the {@code record} setting, one line {@code <sequence> <attempt> <outcome> <epoch millis>}, before
 * the outcome is returned. Each line is one {@code write} on a file opened for append, not buffered in the process:
 * a SIGKILL right after the handler returns loses no line, so an acknowledgement the broker got always has its
 * line (the converse does not hold: a line whose acknowledgement died with the process is a duplicate later).
 *
 * <p>{@code mode} says what it returns:
 *
 * <ul>
 *   <li>{@code mixed}: by {@code sequence % 20}: 0 retries once, 1 asks {@code retryAfter} once (200 ms, or
 *       {@code retryAfterMillis}), 2 throws
 *       once (a failure, held for the failure backoff), the rest acknowledge at once; any later attempt acknowledges;
 *   <li>{@code ack}: acknowledges every call at once (a repeat then only comes from a restart or a crash);
 *   <li>{@code hold}: sequences below {@code holdBelow} ask {@code retryAfter(30 s)} (or {@code holdMillis}) on their
 *       first attempt, then acknowledge; the rest acknowledge at once;
 *   <li>{@code sleep}: sleeps {@code sleepMillis}, then acknowledges (a handler bound by a downstream call);
 *   <li>{@code hang}: never returns, deaf to interrupts, as a call stuck in a socket read without a timeout;
 *   <li>{@code fail}: throws on every attempt, so every message ends in the dead letters; with {@code hangOnAttempt}
 *       set, that attempt hangs as {@code hang} does instead (a runtime killed while the message is in its hands).
 * </ul>
 *
 * <p>A JAR of this handler with the entry {@value #MODE_ENTRY} runs the mode that entry names, whatever the manifest's
 * {@code mode} says: a build with the fix, uploaded as a subscription's next generation (JournalStoryIT).
 *
 * <p>With {@code publishTo} set, every call first publishes {@code out <sequence>} to that topic through the SDK's
 * {@link Publisher}, whatever it then returns: at exactly-once only the attempt that commits has its output read.
 */
public final class RecordingHandler implements Handler<String> {
    static final String MODE_ENTRY = "reliability-mode";

    private FileOutputStream record;
    private String mode;
    private long sleepMillis;
    private long holdBelow;
    private Duration hold;
    private Duration retryAfter;
    /** 0: none. */
    private int hangOnAttempt;
    /** Null unless {@code publishTo} is set. */
    private Publisher<String> output;

    @Override
    public void open(HandlerContext context) throws IOException {
        String file = context.config().get("record");
        if (file == null) {
            throw new IllegalArgumentException("config.record: the file to record every call to is required");
        }
        record = new FileOutputStream(file, true);
        mode = context.config().getOrDefault("mode", "mixed");
        try (InputStream fixed = RecordingHandler.class.getClassLoader().getResourceAsStream(MODE_ENTRY)) {
            if (fixed != null) {
                mode = new String(fixed.readAllBytes(), StandardCharsets.US_ASCII).strip();
            }
        }
        hangOnAttempt = Integer.parseInt(context.config().getOrDefault("hangOnAttempt", "0"));
        sleepMillis = Long.parseLong(context.config().getOrDefault("sleepMillis", "1"));
        holdBelow = Long.parseLong(context.config().getOrDefault("holdBelow", "0"));
        hold = Duration.ofMillis(Long.parseLong(context.config().getOrDefault("holdMillis", "30000")));
        retryAfter = Duration.ofMillis(Long.parseLong(context.config().getOrDefault("retryAfterMillis", "200")));
        String publishTo = context.config().get("publishTo");
        if (publishTo != null) {
            output = context.publisher(publishTo, String.class);
        }
    }

    @Override
    public Outcome handle(Delivery<String> delivery) throws Exception {
        long sequence = Long.parseLong(delivery.value());
        int attempt = delivery.attempt();
        if (output != null) {
            output.publish(delivery, "out " + sequence);
        }
        switch (mode) {
            case "mixed":
                return mixed(sequence, attempt);
            case "ack":
                return write(sequence, attempt, "ack", Outcome.ack());
            case "hold":
                if (sequence < holdBelow && attempt == 1) {
                    return write(sequence, attempt, "retry_after", Outcome.retryAfter(hold));
                }
                return write(sequence, attempt, "ack", Outcome.ack());
            case "sleep":
                Thread.sleep(sleepMillis);
                return write(sequence, attempt, "ack", Outcome.ack());
            case "hang":
                return hang(sequence, attempt);
            case "fail":
                if (attempt == hangOnAttempt) {
                    return hang(sequence, attempt);
                }
                write(sequence, attempt, "fail", null);
                throw new IllegalStateException("failing sequence " + sequence + " on every attempt, as asked");
            default:
                throw new IllegalStateException(
                        "config.mode: mixed, ack, hold, sleep, hang or fail, was '" + mode + "'");
        }
    }

    private Outcome hang(long sequence, int attempt) throws IOException {
        write(sequence, attempt, "hang", null);
        while (true) {
            LockSupport.park(this);
        }
    }

    private Outcome mixed(long sequence, int attempt) throws IOException {
        if (attempt > 1) {
            return write(sequence, attempt, "ack", Outcome.ack());
        }
        switch ((int) (sequence % 20)) {
            case 0:
                return write(sequence, attempt, "retry", Outcome.retry());
            case 1:
                return write(sequence, attempt, "retry_after", Outcome.retryAfter(retryAfter));
            case 2:
                write(sequence, attempt, "fail", null);
                throw new IllegalStateException("failing sequence " + sequence + " once, as asked");
            default:
                return write(sequence, attempt, "ack", Outcome.ack());
        }
    }

    private Outcome write(long sequence, int attempt, String outcome, Outcome returned) throws IOException {
        byte[] line = (sequence + " " + attempt + " " + outcome + " " + System.currentTimeMillis() + "\n")
                .getBytes(StandardCharsets.US_ASCII);
        synchronized (this) {
            record.write(line);
        }
        return returned;
    }

    @Override
    public void close() throws IOException {
        record.close();
    }
}
