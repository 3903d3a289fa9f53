package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The key-hold table on its own: messages are small records (a key, an id), time is manual, and the receiver's part
 * (taking what was let go, admitting it again) is played by the test.
 */
class KeyHoldsTest {
    /** A message: its key and its id (a redelivery has the same id). */
    record Msg(String key, String id) {}

    private final ManualTime time = new ManualTime();
    private final AtomicInteger held = new AtomicInteger();
    private final AtomicInteger timedOut = new AtomicInteger();
    private final AtomicInteger gaps = new AtomicInteger();
    private final KeyHolds<Msg> holds =
            new KeyHolds<>(Msg::key, Msg::id, Duration.ofSeconds(10), time, new KeyHolds.Listener() {
                @Override
                public void heldBehindKeyChanged(int delta) {
                    held.addAndGet(delta);
                }

                @Override
                public void keyHoldTimedOut() {
                    timedOut.incrementAndGet();
                }

                @Override
                public void keyGap() {
                    gaps.incrementAndGet();
                }
            });

    private static Msg k(int n) {
        return new Msg("K", "K" + n);
    }

    @Test
    void withNoRetryPendingEveryMessageGoesOn() {
        assertThat(holds.admit(k(1), 0)).isTrue();
        holds.settled(k(1), false, Duration.ZERO, false);
        assertThat(holds.admit(k(2), 0)).isTrue();
        assertThat(holds.nextReleased()).isNull();
        assertThat(held).hasValue(0);
    }

    @Test
    void aRetryHoldsItsKeysLaterMessagesUntilItIsAcknowledgedOtherKeysGoOn() {
        holds.admit(k(3), 0);
        holds.settled(k(3), true, Duration.ofSeconds(2), false);

        assertThat(holds.admit(k(4), 4)).isFalse();
        assertThat(holds.admit(k(5), 5)).isFalse();
        assertThat(holds.admit(new Msg("other", "o1"), 0)).isTrue();
        assertThat(holds.admit(new Msg(null, "keyless"), 0)).isTrue();
        assertThat(held).hasValue(2);
        assertThat(holds.nextReleased()).isNull();

        // The retry comes back with the same id: it passes; it fails again, still held; then it succeeds.
        assertThat(holds.admit(k(3), 0)).isTrue();
        holds.settled(k(3), true, Duration.ofSeconds(2), false);
        assertThat(holds.admit(k(6), 6)).isFalse();
        assertThat(holds.admit(k(3), 0)).isTrue();
        holds.settled(k(3), false, Duration.ZERO, false);

        assertThat(drain()).containsExactly("K4", "K5", "K6");
        assertThat(held).hasValue(0);
        assertThat(holds.admit(k(7), 0)).as("the key left the table").isTrue();
        assertThat(timedOut).hasValue(0);
    }

    @Test
    void aNewerMessageArrivingWhileTheKeyDrainsWaitsBehindTheOnesLetGo() {
        holds.settled(k(3), true, Duration.ZERO, false);
        holds.admit(k(4), 4);
        holds.admit(k(5), 5);
        holds.settled(k(3), false, Duration.ZERO, false);

        KeyHolds.Parked<Msg> first = holds.nextReleased();
        // K6 reaches its turn before K4 and K5 were handed out again.
        assertThat(holds.admit(k(6), 6)).isFalse();
        assertThat(holds.admit(first.message(), first.receivedNanos())).isTrue();
        KeyHolds.Parked<Msg> second = holds.nextReleased();
        assertThat(second.message()).isEqualTo(k(5));
        assertThat(holds.admit(second.message(), second.receivedNanos())).isTrue();

        assertThat(drain()).containsExactly("K6");
        assertThat(holds.admit(k(7), 0)).isTrue();
        assertThat(held).hasValue(0);
    }

    @Test
    void aMessageLetGoThatFailsAgainHoldsTheRestInTheirOrder() {
        holds.settled(k(3), true, Duration.ZERO, false);
        for (int n = 4; n <= 7; n++) {
            holds.admit(k(n), n);
        }
        holds.settled(k(3), false, Duration.ZERO, false);
        KeyHolds.Parked<Msg> k4 = holds.nextReleased();
        KeyHolds.Parked<Msg> k5 = holds.nextReleased();
        assertThat(holds.admit(k4.message(), 4)).isTrue();
        // K4 fails: K5 (already handed out), K6, K7 and a newer K8 wait behind it, in order.
        holds.settled(k4.message(), true, Duration.ofSeconds(1), false);
        assertThat(holds.admit(k5.message(), 5)).isFalse();
        assertThat(holds.admit(k(8), 8)).isFalse();
        List<String> stillOut = new ArrayList<>();
        KeyHolds.Parked<Msg> next;
        while ((next = holds.nextReleased()) != null) {
            stillOut.add(next.message().id());
            assertThat(holds.admit(next.message(), next.receivedNanos())).isFalse();
        }
        assertThat(stillOut).containsExactly("K6", "K7");

        assertThat(holds.admit(k(4), 4)).as("K4's retry").isTrue();
        holds.settled(k(4), false, Duration.ZERO, false);

        assertThat(drain()).containsExactly("K5", "K6", "K7", "K8");
        assertThat(held).hasValue(0);
    }

    /**
     * FleetIT's stall: the retry of a message let go came back and was acknowledged while a later message let go with
     * it was still out; that one, admitted last, parked behind the message parked before it, with no retry left to end
     * the hold and no timer: the key stood still (10 messages on one runtime, 160 s, until the test gave up).
     */
    @Test
    void theLastMessageLetGoAdmittedAfterItsPredecessorsRetryCameBackLetsTheKeyGoOn() {
        holds.settled(k(3), true, Duration.ZERO, false);
        for (int n = 4; n <= 6; n++) {
            holds.admit(k(n), n);
        }
        holds.settled(k(3), false, Duration.ZERO, false);
        KeyHolds.Parked<Msg> k4 = holds.nextReleased();
        KeyHolds.Parked<Msg> k5 = holds.nextReleased();
        KeyHolds.Parked<Msg> k6 = holds.nextReleased();
        assertThat(holds.admit(k4.message(), 4)).isTrue();
        holds.settled(k4.message(), true, Duration.ofSeconds(1), false);
        assertThat(holds.admit(k5.message(), 5)).as("behind K4's retry").isFalse();
        // K4's retry comes back and succeeds before K6, handed out with K5, reaches its turn.
        assertThat(holds.admit(k(4), 4)).isTrue();
        holds.settled(k(4), false, Duration.ZERO, false);
        assertThat(holds.admit(k6.message(), 6))
                .as("behind K5, parked before it")
                .isFalse();

        assertThat(drain()).containsExactly("K5", "K6");
        assertThat(held).hasValue(0);
        assertThat(holds.admit(k(7), 7)).as("the key left the table").isTrue();
        time.advance(Duration.ofMinutes(1));
        assertThat(timedOut).hasValue(0);
    }

    @Test
    void aRetryThatDoesNotComeBackLetsTheKeyGoAfterItsDelayPlusTheHoldTimeoutCountedAsAnInversion() {
        holds.settled(k(3), true, Duration.ofSeconds(2), false);
        holds.admit(k(4), 4);

        time.advance(Duration.ofSeconds(11));
        assertThat(holds.nextReleased()).as("within 2 s + 10 s").isNull();
        assertThat(holds.oldestHoldNanos()).isEqualTo(Duration.ofSeconds(11).toNanos());
        time.advance(Duration.ofSeconds(1));

        assertThat(timedOut).hasValue(1);
        assertThat(drain()).containsExactly("K4");
        assertThat(holds.passedBy(k(3)))
                .as("for its dead letter: one of its key went first")
                .isEqualTo(1);
        assertThat(holds.passedBy(k(4))).isZero();
        // The retry comes back late: it is handled after its successor.
        assertThat(holds.admit(k(3), 0)).isTrue();
        assertThat(holds.oldestHoldNanos()).isZero();
    }

    @Test
    void aFailureAgainRestartsTheTimeoutFromItsNewDelay() {
        holds.settled(k(3), true, Duration.ofSeconds(2), false);
        holds.admit(k(4), 4);
        time.advance(Duration.ofSeconds(11));
        holds.admit(k(3), 0);
        holds.settled(k(3), true, Duration.ofSeconds(2), false);
        time.advance(Duration.ofSeconds(11));

        assertThat(timedOut).hasValue(0);
        assertThat(holds.nextReleased()).isNull();
    }

    @Test
    void aDeadLetterReleasesItsKeyAndCountsAGap() {
        holds.settled(k(3), true, Duration.ZERO, false);
        holds.admit(k(4), 4);
        holds.admit(k(3), 0);
        holds.settled(k(3), false, Duration.ZERO, true);

        assertThat(gaps).hasValue(1);
        assertThat(drain()).containsExactly("K4");
    }

    @Test
    void aStopGivesBackEveryMessageParkedLetGoOrTakenButNotAdmittedAgain() {
        holds.settled(k(3), true, Duration.ZERO, false);
        holds.admit(k(4), 4);
        holds.admit(k(5), 5);
        holds.settled(k(3), false, Duration.ZERO, false);
        KeyHolds.Parked<Msg> taken = holds.nextReleased();
        assertThat(holds.admit(k(6), 6)).as("behind the ones let go").isFalse();

        assertThat(holds.abandon())
                .as("K4 taken by the receiver, K5 let go and waiting, K6 parked")
                .extracting(Msg::id)
                .containsExactlyInAnyOrder(taken.message().id(), "K5", "K6");
        assertThat(held).hasValue(0);
    }

    @Test
    void aStopAbandonsWhatIsParkedAndHoldsNothingAfterwards() {
        holds.settled(k(3), true, Duration.ofSeconds(2), false);
        holds.admit(k(4), 4);
        holds.admit(k(5), 5);

        assertThat(holds.abandon()).extracting(Msg::id).containsExactlyInAnyOrder("K4", "K5");
        assertThat(held).hasValue(0);
        assertThat(holds.nextReleased()).isNull();
        holds.settled(k(6), true, Duration.ofSeconds(2), false);
        assertThat(holds.admit(k(7), 7)).isTrue();
        time.advance(Duration.ofSeconds(30));
        assertThat(timedOut).hasValue(0);
    }

    /** Plays the receiver: hands out each message let go and admits it again, in order; the ids that went on. */
    private List<String> drain() {
        List<String> handled = new ArrayList<>();
        KeyHolds.Parked<Msg> next;
        while ((next = holds.nextReleased()) != null) {
            assertThat(holds.admit(next.message(), next.receivedNanos())).isTrue();
            handled.add(next.message().id());
        }
        return handled;
    }
}
