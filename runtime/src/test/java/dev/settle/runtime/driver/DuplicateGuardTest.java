package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.driver.DuplicateGuard.Verdict;
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
}
