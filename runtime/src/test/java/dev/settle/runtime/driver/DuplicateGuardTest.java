package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.driver.DuplicateGuard.Verdict;
import java.util.List;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.junit.jupiter.api.Test;

class DuplicateGuardTest {
    private final DuplicateGuard guard = new DuplicateGuard(3);

    private static MessageId id(long entry) {
        return new MessageIdImpl(7, entry, -1);
    }

    @Test
    void aFirstCopyIsHandled() {
        assertThat(guard.admit(id(1), 0)).isEqualTo(Verdict.HANDLE);
    }

    @Test
    void aCopyWhoseTwinIsBeingHandledIsHeldBackUntilTheTwinFinishes() {
        guard.admit(id(1), 1);

        assertThat(guard.admit(id(1), 1)).isEqualTo(Verdict.IN_FLIGHT);
    }

    @Test
    void aCopyWhoseTwinWasAcknowledgedIsAcknowledgedAgainNotHandled() {
        guard.admit(id(1), 1);
        guard.finished(id(1), 1, true);

        assertThat(guard.admit(id(1), 1)).isEqualTo(Verdict.ACKED);
        assertThat(guard.admit(new MessageIdImpl(7, 1, -1), 1))
                .as("an equal id, another instance")
                .isEqualTo(Verdict.ACKED);
    }

    @Test
    void askingWhetherATwinWasAcknowledgedTakesNothingInHand() {
        guard.admit(id(1), 1);
        guard.finished(id(1), 1, true);

        assertThat(guard.twinAcknowledged(UnitOfWorkTest.message(id(1), 1))).isTrue();
        assertThat(guard.twinAcknowledged(UnitOfWorkTest.message(id(2), 1))).isFalse();
        assertThat(guard.admit(id(2), 1)).as("asked about, not in hand").isEqualTo(Verdict.HANDLE);
    }

    @Test
    void theNextAttemptOfARetriedMessageIsANewDelivery() {
        guard.admit(id(1), 0);
        guard.finished(id(1), 0, false);

        assertThat(guard.admit(id(1), 1)).isEqualTo(Verdict.HANDLE);
    }

    @Test
    void aCopyWhoseTwinWasRetriedIsHandedOverSinceARestartedBrokerCountsFromZeroAgain() {
        guard.admit(id(1), 0);
        guard.finished(id(1), 0, false);

        assertThat(guard.admit(id(1), 0)).isEqualTo(Verdict.HANDLE);
    }

    @Test
    void aCopyWhoseTwinIsBeingDeadLetteredIsHeldBackThenAcknowledgedAgainOnceTheLetterIsStored() {
        // With overlapping calls, and with one call at a time (no lock until a letter is being written).
        for (DuplicateGuard each : List.of(new DuplicateGuard(3, true), new DuplicateGuard(3, false))) {
            assertThat(each.admit(id(1), 1)).isEqualTo(Verdict.HANDLE);
            // The last attempt failed: its letter is being written when the call is settled.
            each.lettering(id(1), 1);
            each.finished(id(1), 1, false);

            assertThat(each.admit(id(1), 1)).as("while the letter is written").isEqualTo(Verdict.IN_FLIGHT);
            each.lettered(id(1), 1, true);
            assertThat(each.admit(id(1), 1)).as("once it is stored").isEqualTo(Verdict.ACKED);
            assertThat(each.admit(id(2), 0)).isEqualTo(Verdict.HANDLE);
        }
    }

    @Test
    void aCopyWhoseTwinsLetterWasNotStoredIsHandedOverAsAfterARetry() {
        guard.admit(id(1), 1);
        guard.lettering(id(1), 1);
        guard.finished(id(1), 1, false);
        guard.lettered(id(1), 1, false);

        assertThat(guard.admit(id(1), 1)).isEqualTo(Verdict.HANDLE);
    }

    @Test
    void onlyTheLastCapacityAcknowledgementsAreRemembered() {
        for (long entry = 1; entry <= 4; entry++) {
            guard.admit(id(entry), 0);
            guard.finished(id(entry), 0, true);
        }

        assertThat(guard.admit(id(1), 0)).as("the eldest, forgotten").isEqualTo(Verdict.HANDLE);
        assertThat(guard.admit(id(2), 0)).isEqualTo(Verdict.ACKED);
        assertThat(guard.admit(id(4), 0)).isEqualTo(Verdict.ACKED);
    }

    @Test
    void capacityBelowOneIsRefused() {
        assertThatThrownBy(() -> new DuplicateGuard(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("capacity must be at least 1, was 0");
    }

    @Test
    void overManyAcknowledgementsExactlyTheLastCapacityAreRememberedAsAMapWouldRememberThem() {
        // The arrays and their index against the map they replaced, over keys that collide and wrap around.
        int capacity = 257;
        DuplicateGuard arrays = new DuplicateGuard(capacity, false);
        java.util.LinkedHashMap<String, Boolean> model = new java.util.LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(java.util.Map.Entry<String, Boolean> eldest) {
                return size() > capacity;
            }
        };
        java.util.Random random = new java.util.Random(42);
        for (int i = 0; i < 50_000; i++) {
            long ledger = random.nextInt(3);
            long entry = random.nextInt(2_000);
            int batchIndex = random.nextInt(3) - 1;
            int count = random.nextInt(2);
            MessageId id = new org.apache.pulsar.client.impl.BatchMessageIdImpl(ledger, entry, -1, batchIndex);
            String key = ledger + ":" + entry + ":" + batchIndex + ":" + count;
            Verdict expected = model.containsKey(key) ? Verdict.ACKED : Verdict.HANDLE;
            assertThat(arrays.admit(id, count)).as("copy %d, %s", i, key).isEqualTo(expected);
            if (expected == Verdict.HANDLE) {
                boolean acknowledged = random.nextInt(4) != 0;
                arrays.finished(id, count, acknowledged);
                if (acknowledged) {
                    model.put(key, Boolean.TRUE);
                }
            }
        }
    }

    @Test
    void withoutOverlappingCallsATwinIsNeverHeldBackAsInFlight() {
        DuplicateGuard sequential = new DuplicateGuard(3, false);
        assertThat(sequential.admit(id(1), 0)).isEqualTo(Verdict.HANDLE);
        // Concurrency 1 takes no message before the last one is settled: a second admit means the first is over.
        assertThat(sequential.admit(id(1), 0)).isEqualTo(Verdict.HANDLE);
        sequential.finished(id(1), 0, true);
        assertThat(sequential.admit(id(1), 0)).isEqualTo(Verdict.ACKED);
    }

    @Test
    void withoutOverlappingCallsATwinOfADeliveryWaitingForItsOutputsIsHeldBackUntilItIsSettled() {
        DuplicateGuard sequential = new DuplicateGuard(3, false);
        assertThat(sequential.admit(id(1), 0)).isEqualTo(Verdict.HANDLE);
        // Its call returned; its outputs are not stored yet, so its permit goes back before it is settled.
        sequential.settlesLater(id(1), 0);
        assertThat(sequential.admit(id(2), 0)).isEqualTo(Verdict.HANDLE);
        sequential.finished(id(2), 0, true);

        assertThat(sequential.admit(id(1), 0)).as("the twin of the one waiting").isEqualTo(Verdict.IN_FLIGHT);
        sequential.finished(id(1), 0, true, true);
        assertThat(sequential.admit(id(1), 0)).isEqualTo(Verdict.ACKED);
        assertThat(sequential.admit(id(2), 0)).isEqualTo(Verdict.ACKED);
    }

    @Test
    void withoutOverlappingCallsADeliveryRetriedAfterWaitingForItsOutputsIsNoLongerInHand() {
        DuplicateGuard sequential = new DuplicateGuard(3, false);
        sequential.admit(id(1), 0);
        sequential.settlesLater(id(1), 0);
        // An output failed: retried, so a copy with the same count (after a broker restart) is handed over.
        sequential.finished(id(1), 0, false, true);

        assertThat(sequential.admit(id(1), 0)).isEqualTo(Verdict.HANDLE);
    }
}
