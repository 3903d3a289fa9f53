package dev.settle.runtime.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LimitsTest {
    @Test
    void bothPortsReadAnUnreadBodyAwayForTenSecondsAtMost() {
        assertThat(Limits.probes().unreadBodyLongest()).isEqualTo(Duration.ofSeconds(10));
        assertThat(Limits.admin().unreadBodyLongest()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void anUnreadBodyWaitThatIsNotPositiveIsRefusedWithTheValue() {
        for (Duration wait : new Duration[] {Duration.ZERO, Duration.ofMillis(-1)}) {
            assertThatThrownBy(() -> new Limits(Duration.ofSeconds(1), 256, 8, 1, 1, Duration.ofSeconds(2), 1, 8, wait))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("the longest wait for an unread body must be positive: " + wait);
        }
    }
}
