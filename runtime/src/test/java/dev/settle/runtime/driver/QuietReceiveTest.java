package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * When the receive loop counts its subscription as quiet (issue 51): in a stream, not at each moment the client's
 * queue is empty between two messages, only once no message came for {@link QuietReceive#QUIET_MICROS}; after a lone
 * message, at once. A fake consumer answers each receive from a script and records the waits asked of it, on a clock
 * only the test moves.
 */
class QuietReceiveTest {
    /** A receive's answer when no message came within its timeout (a deque holds no null). */
    private static final String NONE = "none";

    private static final String SHORT_WAIT = "receive " + QuietReceive.QUIET_MICROS + " µs";

    private final ManualTime time = new ManualTime();
    /** What the loop did, in order: each receive with its timeout in microseconds, and "quiet". */
    private final List<String> calls = new ArrayList<>();
    /** Each receive's answer, in turn: a message, or NONE; NONE once they are used up. */
    private final Deque<String> answers = new ArrayDeque<>();

    private final QuietReceive<String> receive = new QuietReceive<>(
            (timeout, unit) -> {
                calls.add("receive " + unit.toMicros(timeout) + " µs");
                String answer = answers.poll();
                return answer == null || answer.equals(NONE) ? null : answer;
            },
            () -> calls.add("quiet"),
            100,
            time);

    private void answer(String... inTurn) {
        for (String message : inTurn) {
            answers.add(message == null ? NONE : message);
        }
    }

    private String next(boolean noCallRuns) throws Exception {
        return receive.next(() -> noCallRuns);
    }

    /** Two messages taken back to back: the loop is in a stream. */
    private void inAStream() throws Exception {
        answer("m1", "m2");
        next(true);
        next(true);
        calls.clear();
    }

    @Test
    void aMessageWaitingIsTakenAtOnce() throws Exception {
        answer("m1");

        assertThat(next(true)).isEqualTo("m1");
        assertThat(calls).containsExactly("receive 0 µs");
    }

    @Test
    void inAStreamAMessageArrivingWithinTheShortWaitIsTakenWithoutFlushingOrIdling() throws Exception {
        inAStream();
        // The queue empty for a moment between two messages of a busy stream: the outputs' batch keeps filling.
        answer(null, "m3");

        assertThat(next(true)).isEqualTo("m3");
        assertThat(calls).containsExactly("receive 0 µs", SHORT_WAIT).doesNotContain("quiet");
    }

    @Test
    void inAStreamNoMessageWithinTheShortWaitMakesTheSubscriptionQuietBeforeTheLongWait() throws Exception {
        inAStream();
        answer(null, null, "m3");

        assertThat(next(true)).isEqualTo("m3");
        assertThat(calls).containsExactly("receive 0 µs", SHORT_WAIT, "quiet", "receive 100000 µs");
    }

    @Test
    void aLoneMessageIsFollowedByQuietAtOnceWithoutTheShortWait() throws Exception {
        inAStream();
        // At 10 msg/s: the next message comes 100 ms after the last one, and its outputs go as soon as it is handled.
        time.advance(Duration.ofMillis(100));
        answer("lone");
        assertThat(next(true)).isEqualTo("lone");
        answer(null, null);

        assertThat(next(true)).isNull();
        assertThat(calls).containsExactly("receive 0 µs", "receive 0 µs", "quiet", "receive 100000 µs");
    }

    @Test
    void whileACallRunsItIsNotQuietAndTheLoopWaitsForTheNextMessage() throws Exception {
        inAStream();
        // A running call may still send outputs into the batch: nothing is flushed, nor a transaction closed.
        assertThat(next(false)).isNull();
        assertThat(calls).containsExactly("receive 0 µs", "receive 100000 µs");
    }
}
