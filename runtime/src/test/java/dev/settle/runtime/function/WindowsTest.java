package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.driver.LeftUnacknowledged;
import dev.settle.runtime.manifest.WindowSettings;
import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The windows Pulsar Functions' {@code WindowManager} cuts in processing time, and when each message may be
 * acknowledged: once no later window holds it and every window that held it is stored.
 */
class WindowsTest {
    private final ManualTime time = new ManualTime();
    /** The windows fired, as the values of their records. */
    private final List<List<Object>> fired = new ArrayList<>();
    /** Each fired window's outputs, completed by the test. */
    private final List<CompletableFuture<Void>> stored = new ArrayList<>();

    private final List<CompletableFuture<MessageId>> done = new ArrayList<>();
    private Windows windows;

    @AfterEach
    void close() {
        if (windows != null) {
            windows.close();
        }
    }

    private Windows windows(boolean byCount, long length, long sliding) {
        windows = new Windows(
                "sums",
                new WindowSettings(byCount, length, sliding),
                time,
                window -> {
                    synchronized (fired) {
                        fired.add(window.stream().map(InputRecord::getValue).toList());
                        CompletableFuture<Void> outputs = new CompletableFuture<>();
                        stored.add(outputs);
                        return outputs;
                    }
                },
                LoggerFactory.getLogger(WindowsTest.class));
        windows.start();
        return windows;
    }

    private void add(int... values) {
        for (int value : values) {
            CompletableFuture<MessageId> future = new CompletableFuture<>();
            done.add(future);
            windows.add(new InputRecord(null, null, value, Schema.INT32), future);
        }
    }

    private List<Integer> acknowledgeable() {
        List<Integer> ready = new ArrayList<>();
        for (int i = 0; i < done.size(); i++) {
            if (done.get(i).isDone() && !done.get(i).isCompletedExceptionally()) {
                ready.add(i + 1);
            }
        }
        return ready;
    }

    @Test
    void aTumblingCountWindowFiresEveryLengthMessagesAndItsInputsWaitForItsOutputs() {
        windows(true, 3, 3);
        add(1, 2, 3, 4, 5, 6, 7);

        assertThat(fired).containsExactly(List.of(1, 2, 3), List.of(4, 5, 6));
        assertThat(acknowledgeable()).isEmpty();
        stored.get(1).complete(null);
        assertThat(acknowledgeable()).containsExactly(4, 5, 6);
        stored.get(0).complete(null);
        assertThat(acknowledgeable()).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(windows.waitingCount()).isEqualTo(1);
    }

    @Test
    void aSlidingCountWindowHoldsTheLastLengthMessagesAndReleasesEachAfterItsLastWindow() {
        windows(true, 4, 2);
        add(1, 2, 3, 4, 5, 6);
        stored.forEach(future -> future.complete(null));

        assertThat(fired).containsExactly(List.of(1, 2), List.of(1, 2, 3, 4), List.of(3, 4, 5, 6));
        // 5 and 6 are in the next window too (7..8 with 5..6), so they still wait.
        assertThat(acknowledgeable()).containsExactly(1, 2, 3, 4);
    }

    @Test
    void aMessageInTwoWindowsWaitsForBoth() {
        windows(true, 4, 2);
        add(1, 2, 3, 4);
        stored.get(1).complete(null);
        assertThat(acknowledgeable()).isEmpty();
        stored.get(0).complete(null);
        assertThat(acknowledgeable()).containsExactly(1, 2);
    }

    @Test
    void aWindowWhoseOutputFailedFailsEachOfItsInputs() {
        windows(true, 2, 2);
        add(1, 2);
        stored.get(0).completeExceptionally(new IllegalStateException("topic refused the send"));

        assertThat(done).allSatisfy(future -> assertThat(future).isCompletedExceptionally());
    }

    @Test
    void aTumblingTimeWindowFiresEveryLengthWithWhatWasReceivedAndSkipsAnEmptyWindow() {
        windows(false, 1000, 1000);
        // A window is (end - length, end], as Functions' TimeEvictionPolicy: nothing here lands on a boundary.
        time.advance(Duration.ofMillis(1));
        add(1, 2);
        time.advance(Duration.ofMillis(400));
        add(3);
        time.advance(Duration.ofMillis(599)); // 1 s: the first window
        await().atMost(Duration.ofSeconds(5)).until(() -> fired.size() == 1);
        time.advance(Duration.ofMillis(1));
        add(4);
        time.advance(Duration.ofMillis(999)); // 2 s
        await().atMost(Duration.ofSeconds(5)).until(() -> fired.size() == 2);
        time.advance(Duration.ofMillis(1000)); // 3 s: nothing received, nothing fired
        stored.forEach(future -> future.complete(null));

        assertThat(fired).containsExactly(List.of(1, 2, 3), List.of(4));
        assertThat(acknowledgeable()).containsExactly(1, 2, 3, 4);
        assertThat(windows.waitingCount()).isZero();
    }

    @Test
    void aMessageReceivedAfterAWindowsEndButBeforeItFiresIsInTheNextWindowOnly() {
        windows(false, 1000, 1000);
        time.advance(Duration.ofMillis(1));
        add(1);
        // Holding the windows' monitor keeps the first window's fire (due at 1 s) from running while 2 arrives.
        synchronized (windows) {
            time.advance(Duration.ofMillis(999)); // 1 s: the first window is due, its fire queued behind the monitor
            time.advance(Duration.ofMillis(1));
            add(2);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> fired.size() == 1);
        time.advance(Duration.ofMillis(999)); // 2 s
        await().atMost(Duration.ofSeconds(5)).until(() -> fired.size() == 2);
        stored.forEach(future -> future.complete(null));

        assertThat(fired).containsExactly(List.of(1), List.of(2));
        assertThat(acknowledgeable()).containsExactly(1, 2);
    }

    @Test
    void aSlidingTimeWindowHoldsWhatWasReceivedInTheLastLength() {
        windows(false, 2000, 1000);
        time.advance(Duration.ofMillis(1));
        add(1);
        time.advance(Duration.ofMillis(999)); // 1 s: [1]
        await().atMost(Duration.ofSeconds(5)).until(() -> fired.size() == 1);
        time.advance(Duration.ofMillis(500));
        add(2);
        time.advance(Duration.ofMillis(500)); // 2 s: [1, 2]
        await().atMost(Duration.ofSeconds(5)).until(() -> fired.size() == 2);
        stored.forEach(future -> future.complete(null));
        assertThat(acknowledgeable()).containsExactly(1);
        time.advance(Duration.ofMillis(1000)); // 3 s: [2]
        await().atMost(Duration.ofSeconds(5)).until(() -> fired.size() == 3);
        stored.forEach(future -> future.complete(null));

        assertThat(fired).containsExactly(List.of(1), List.of(1, 2), List.of(2));
        assertThat(acknowledgeable()).containsExactly(1, 2);
    }

    @Test
    void aStopLeavesTheOpenWindowsMessagesUnacknowledgedAndTheNextStartFillsNewWindows() {
        windows(true, 3, 3);
        add(1, 2);
        windows.stopping();
        add(3);

        assertThat(done)
                .allSatisfy(future -> assertThat(future)
                        .failsWithin(Duration.ZERO)
                        .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                        .withCauseInstanceOf(LeftUnacknowledged.class));
        assertThat(fired).isEmpty();

        windows.resume();
        add(1, 2, 3);
        assertThat(fired).containsExactly(List.of(1, 2, 3));
    }

    @Test
    void aFunctionThatThrowsFailsItsWindowsInputs() {
        windows = new Windows(
                "sums",
                new WindowSettings(true, 2, 2),
                time,
                window -> {
                    throw new IllegalArgumentException("bad window");
                },
                LoggerFactory.getLogger(WindowsTest.class));
        add(1, 2);

        assertThat(done)
                .allSatisfy(
                        future -> assertThat(future.handle((id, error) -> error).join())
                                .isInstanceOfAny(IllegalArgumentException.class, CompletionException.class));
    }
}
