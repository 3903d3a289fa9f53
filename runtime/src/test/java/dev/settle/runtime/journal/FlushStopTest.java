package dev.settle.runtime.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class FlushStopTest {
    @Test
    void theHookIsOffUnlessItsPropertyIsSet() {
        assertThat(FlushStop.parse(null)).isZero();
        assertThat(FlushStop.parse(" ")).isZero();
        assertThat(System.getProperty(FlushStop.PROPERTY)).isNull();
        assertThat(FlushStop.stopped()).isFalse();
    }

    @Test
    void aMalformedCountIsRefusedWithWhatItMustBe() {
        assertThatThrownBy(() -> FlushStop.parse("0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("-Dsettle.test.journalFlushStopsAt must be a record count of 1 or more, was '0'");
        assertThat(FlushStop.parse("2")).isEqualTo(2);
    }
}
