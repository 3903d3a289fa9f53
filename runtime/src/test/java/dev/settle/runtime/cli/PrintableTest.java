package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The one way commands print text from a message or a record: nothing in it can drive the terminal. */
class PrintableTest {
    @Test
    void escapeAndTheAnsiSequencesItStartsAreWrittenOut() {
        // The letter: clear the screen, go home, print a fake summary.
        assertThat(Printable.text("\u001b[2J\u001b[HALL LETTERS REPLAYED OK"))
                .isEqualTo("\\u001b[2J\\u001b[HALL LETTERS REPLAYED OK");
    }

    @Test
    void lineBreaksTabsAndBackslashesAreWrittenOutSoNoLineCanBeForged() {
        assertThat(Printable.text("a\r\nb\tc\\n")).isEqualTo("a\\r\\nb\\tc\\\\n");
        assertThat(Printable.text("a\u2028b\u2029c\u0085d")).isEqualTo("a\\u2028b\\u2029c\\u0085d");
    }

    @Test
    void everyOtherControlAndFormatCharacterIsEscapedAndTextIsKept() {
        assertThat(Printable.text("\u0000\u0007\u007f\u009b\u202eevil\u200b\u2066"))
                .isEqualTo("\\u0000\\u0007\\u007f\\u009b\\u202eevil\\u200b\\u2066");
        // A format character beyond the 16-bit range (a tag character), and a lone surrogate.
        assertThat(Printable.text("x\uDB40\uDC41y\uD800")).isEqualTo("x\\U000e0041y\\ud800");
        assertThat(Printable.text("Zoë 👋 persistent://public/default/orders"))
                .isEqualTo("Zoë 👋 persistent://public/default/orders");
    }

    @Test
    void nothingIsShownAsNull() {
        assertThat(Printable.text(null)).isEqualTo("null");
        assertThat(Printable.text(42)).isEqualTo("42");
    }
}
