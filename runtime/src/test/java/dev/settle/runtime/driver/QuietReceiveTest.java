package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * When the receive loop counts its subscription as quiet (issue 51): not at each moment the client's queue is empty
 * between two messages of a busy stream, only once no message came for {@link QuietReceive#QUIET_MICROS}. A fake
 * consumer answers each receive from a script and records the waits asked of it.
 */
class QuietReceiveTest {
    /** What the loop did, in order: each receive with its timeout in microseconds, and "quiet". */
    private final List<String> calls = new ArrayList<>();
    /** A receive's answer when no message came within its timeout (a deque holds no null). */
    private static final String NONE = "none";
    /** Each receive's answer, in turn: a message, or NONE; NONE once they are used up. */
    private final Deque<String> answers = new ArrayDeque<>();

    private final QuietReceive<String> receive = new QuietReceive<>(
            (timeout, unit) -> {
                calls.add("receive " + unit.toMicros(timeout) + " µs");
                String answer = answers.poll();
                return answer == null || answer.equals(NONE) ? null : answer;
            },
            () -> calls.add("quiet"),
            100);

    private void answer(String... inTurn) {
        for (String message : inTurn) {
            answers.add(message == null ? NONE : message);
        }
    }

    private String next(boolean noCallRuns) throws Exception {
        return receive.next(() -> noCallRuns);
    }

    @Test
    void aMessageWaitingIsTakenAtOnce() throws Exception {
        answer("m1");

        assertThat(next(true)).isEqualTo("m1");
        assertThat(calls).containsExactly("receive 0 µs");
    }

    @Test
    void aMessageArrivingWithinTheShortWaitIsTakenWithoutFlushingOrIdling() throws Exception {
        // The queue empty for a moment between two messages of a busy stream: the outputs' batch keeps filling.
        answer(null, "m2");

        assertThat(next(true)).isEqualTo("m2");
        assertThat(calls)
                .containsExactly("receive 0 µs", "receive " + QuietReceive.QUIET_MICROS + " µs")
                .doesNotContain("quiet");
    }

    @Test
    void noMessageWithinTheShortWaitMakesTheSubscriptionQuietBeforeTheLongWait() throws Exception {
        answer(null, null, "m3");

        assertThat(next(true)).isEqualTo("m3");
        assertThat(calls)
                .containsExactly(
                        "receive 0 µs", "receive " + QuietReceive.QUIET_MICROS + " µs", "quiet", "receive 100000 µs");
    }

    @Test
    void whileACallRunsItIsNotQuietAndTheLoopWaitsForTheNextMessage() throws Exception {
        // A running call may still send outputs into the batch: nothing is flushed, nor a transaction closed.
        assertThat(next(false)).isNull();
        assertThat(calls).containsExactly("receive 0 µs", "receive 100000 µs");
    }
}
