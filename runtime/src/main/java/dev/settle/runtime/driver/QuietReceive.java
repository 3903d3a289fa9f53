package dev.settle.runtime.driver;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.pulsar.client.api.PulsarClientException;

/**
 * The receive loop's take from the consumer, and when the subscription counts as quiet: a message waiting is taken at
 * once; when none waits and no call runs, the loop waits {@link #QUIET_MICROS} for one more before it runs
 * {@code quiet} (sends the outputs' batches, closes an exactly-once subscription's open transaction), then waits for
 * the next message as long as {@code pollMillis}.
 *
 * <p>Why the short wait (issue 51): an unbatched stream of 9 000–20 000 msg/s arrives one message every 50–110 µs,
 * so the client's queue is often empty for a moment between two of them. Run at each such moment, {@code quiet}
 * flushed the output producer's batch almost per message (6.75× LocalRunner's SEND commands for an identity function)
 * and closed exactly-once transactions before they were full. A gap of 1 ms is ten of those messages missing: the
 * stream has paused, and what waits is sent. A lone message at a low rate still goes out within about 1 ms of its
 * call, a tenth of the output producer's 10 ms batch delay and of {@code commitBatch.maxDelay}'s default.
 */
final class QuietReceive<M> {
    /** How long no message must come, with no call running, before the subscription counts as quiet. */
    static final int QUIET_MICROS = 1_000;

    /** The consumer's {@code receive(timeout, unit)}: a message within the timeout, else null. */
    interface Receive<M> {
        M receive(int timeout, TimeUnit unit) throws PulsarClientException;
    }

    private final Receive<M> receive;
    private final Runnable quiet;
    private final int pollMillis;

    QuietReceive(Receive<M> receive, Runnable quiet, int pollMillis) {
        this.receive = receive;
        this.quiet = quiet;
        this.pollMillis = pollMillis;
    }

    /**
     * The next message, or null when none came within {@code pollMillis}; runs {@code quiet} on the way when none came
     * within {@link #QUIET_MICROS} and {@code noCallRuns} (asked once no message waits: a running call may still send
     * outputs, and the thread that calls this is the one that starts calls).
     */
    M next(BooleanSupplier noCallRuns) throws PulsarClientException {
        M message = receive.receive(0, TimeUnit.MILLISECONDS);
        if (message != null) {
            return message;
        }
        if (noCallRuns.getAsBoolean()) {
            message = receive.receive(QUIET_MICROS, TimeUnit.MICROSECONDS);
            if (message != null) {
                return message;
            }
            quiet.run();
        }
        return receive.receive(pollMillis, TimeUnit.MILLISECONDS);
    }
}
