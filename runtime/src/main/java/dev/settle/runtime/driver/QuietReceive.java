package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * The receive loop's take from the consumer, and when the subscription counts as quiet: a message waiting is taken at
 * once; when none waits and no call runs, the loop runs {@code quiet} (sends the outputs' batches, closes an
 * exactly-once subscription's open transaction), then waits for the next message as long as {@code pollMillis}. In a
 * stream, where the last message came within {@link #QUIET_MICROS} of the one before it, it first waits that long for
 * one more, and runs {@code quiet} only if none came.
 *
 * <p>Why the short wait (issue 51): an unbatched stream of 9 000–20 000 msg/s arrives one message every 50–110 µs,
 * so the client's queue is often empty for a moment between two of them. Run at each such moment, {@code quiet}
 * flushed the output producer's batch almost per message (6.75× LocalRunner's SEND commands for an identity function)
 * and closed exactly-once transactions before they were full. A gap of 1 ms is ten of those messages missing: the
 * stream has paused, and what waits is sent. A lone message, one that came long after the one before it, is not
 * waited after: its outputs go at once, as before, and its latency does not take a wake-up from a timed wait, which on
 * a busy machine waits for a core.
 */
final class QuietReceive<M> {
    /** How long no message must come, with no call running, before a stream counts as quiet. */
    static final int QUIET_MICROS = 1_000;

    private static final long QUIET_NANOS = TimeUnit.MICROSECONDS.toNanos(QUIET_MICROS);

    /** The consumer's {@code receive(timeout, unit)}: a message within the timeout, else null. */
    interface Receive<M> {
        M receive(int timeout, TimeUnit unit) throws PulsarClientException;
    }

    private final Receive<M> receive;
    private final Runnable quiet;
    private final int pollMillis;
    private final Time time;

    /** When the last message was taken; read and written on the receive thread only. */
    private long lastNanos;
    /** Whether the last message came within {@link #QUIET_MICROS} of the one before it. */
    private boolean inStream;

    QuietReceive(Receive<M> receive, Runnable quiet, int pollMillis, Time time) {
        this.receive = receive;
        this.quiet = quiet;
        this.pollMillis = pollMillis;
        this.time = time;
        this.lastNanos = time.nanoTime() - QUIET_NANOS;
    }

    /**
     * The next message, or null when none came within {@code pollMillis}; runs {@code quiet} on the way when none
     * waits and {@code noCallRuns} (asked once no message waits: a running call may still send outputs, and the thread
     * that calls this is the one that starts calls), after the short wait in a stream.
     */
    M next(BooleanSupplier noCallRuns) throws PulsarClientException {
        M message = receive.receive(0, TimeUnit.MILLISECONDS);
        if (message == null && noCallRuns.getAsBoolean()) {
            if (inStream) {
                message = receive.receive(QUIET_MICROS, TimeUnit.MICROSECONDS);
            }
            if (message == null) {
                quiet.run();
            }
        }
        if (message == null) {
            message = receive.receive(pollMillis, TimeUnit.MILLISECONDS);
        }
        if (message != null) {
            long now = time.nanoTime();
            inStream = now - lastNanos < QUIET_NANOS;
            lastNanos = now;
        }
        return message;
    }
}
