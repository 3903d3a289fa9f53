package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UntrustedTextTest {
    @Test
    void lineBreaksCannotForgeALogLine() {
        assertThat(UntrustedText.escape("not found\n01:00:00.000 INFO  [main] d.s.r.Settle - all is well\r"))
                .isEqualTo("not found\\n01:00:00.000 INFO  [main] d.s.r.Settle - all is well\\r")
                .doesNotContain("\n", "\r");
    }

    @Test
    void ansiEscapesAndBidirectionalOverridesAreWrittenOut() {
        assertThat(UntrustedText.escape("\u001b[31mred\u001b[0m \u202eevil\u2028x\u0085"))
                .isEqualTo("\\u001b[31mred\\u001b[0m \\u202eevil\\u2028x\\u0085");
    }

    @Test
    void aBackslashIsDoubledSoAnEscapeCannotBeFaked() {
        assertThat(UntrustedText.escape("a\\nb")).isEqualTo("a\\\\nb");
    }

    @Test
    void longTextIsCut() {
        assertThat(UntrustedText.escape("x".repeat(50), 10)).isEqualTo("x".repeat(10) + "…");
        assertThat(UntrustedText.escape("plain text, unchanged")).isEqualTo("plain text, unchanged");
    }
}
