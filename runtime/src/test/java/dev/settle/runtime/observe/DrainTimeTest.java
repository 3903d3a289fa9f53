package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** Issue 48: the drain time is the broker's backlog over the rate settled in the last minute, tested at known rates. */
class DrainTimeTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long NOW_MILLIS = 1_800_000_000_000L;

    @Test
    void aBacklogOf3000SettledAt100ASecondDrainsIn30Seconds() {
        DrainTime drain = new DrainTime();
        // 100 a second, read every 15 s for two minutes.
        for (int s = 0; s <= 120; s += 15) {
            drain.record(s * SECOND, 100L * s, 3000, NOW_MILLIS - 45_000, NOW_MILLIS);
        }

        assertThat(drain.settleRate()).isCloseTo(100.0, within(1e-9));
        assertThat(drain.drainSeconds()).isCloseTo(30.0, within(1e-9));
        assertThat(drain.oldestUnsettledAgeSeconds()).isCloseTo(45.0, within(1e-9));
    }

    @Test
    void theRateFollowsTheLastMinuteNotTheWholeRun() {
        DrainTime drain = new DrainTime();
        long settled = 0;
        // Ten minutes at 1 000 a second, then two at 10 a second.
        for (int s = 0; s <= 600; s += 15) {
            drain.record(s * SECOND, settled, 600, 0, NOW_MILLIS);
            settled += 15_000;
        }
        settled -= 15_000;
        for (int s = 615; s <= 720; s += 15) {
            settled += 150;
            drain.record(s * SECOND, settled, 600, 0, NOW_MILLIS);
        }

        assertThat(drain.settleRate()).isCloseTo(10.0, within(1e-9));
        assertThat(drain.drainSeconds()).isCloseTo(60.0, within(1e-9));
    }

    @Test
    void noBacklogIsZeroAndABacklogThatIsNotSettledNeverDrains() {
        DrainTime empty = new DrainTime();
        empty.record(0, 0, 0, 0, NOW_MILLIS);
        empty.record(15 * SECOND, 0, 0, 0, NOW_MILLIS);
        assertThat(empty.drainSeconds()).isZero();
        assertThat(empty.oldestUnsettledAgeSeconds()).isZero();

        DrainTime stuck = new DrainTime();
        stuck.record(0, 500, 40, NOW_MILLIS - 600_000, NOW_MILLIS);
        stuck.record(15 * SECOND, 500, 40, NOW_MILLIS - 600_000, NOW_MILLIS);
        assertThat(stuck.drainSeconds()).isInfinite();
        assertThat(stuck.oldestUnsettledAgeSeconds()).isEqualTo(600.0);
    }
}
