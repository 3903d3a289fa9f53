package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KillPointTest {
    @Test
    void theHookIsOffUnlessItsPropertyIsSet() {
        assertThat(KillPoint.parse(null)).isNull();
        assertThat(KillPoint.parse(" ")).isNull();
        assertThat(System.getProperty(KillPoint.PROPERTY)).isNull();
    }

    @Test
    void aMalformedHookIsRefusedWithWhatItMustBe() {
        assertThatThrownBy(() -> KillPoint.parse("before-send:1:/tmp/x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("-Dsettle.test.haltAt must be after-ack|during-commit:<n>:<marker file>, was"
                        + " 'before-send:1:/tmp/x'");
        assertThatThrownBy(() -> KillPoint.parse("after-ack:0:/tmp/x")).isInstanceOf(IllegalArgumentException.class);
        assertThat(KillPoint.parse("during-commit:51:/tmp/x")).isNotNull();
    }
}
