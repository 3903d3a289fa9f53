package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code settle consume} shows any payload without letting it drive the terminal. */
class SafePayloadTest {
    private static String show(String text, int cap) {
        return SafePayload.show(text.getBytes(StandardCharsets.UTF_8), cap);
    }

    @Test
    void utf8TextIsShownAsItIs() {
        assertThat(show("hello, Zoë 👋", 1024)).isEqualTo("hello, Zoë 👋");
    }

    @Test
    void controlAndFormatCharactersAreEscaped() {
        assertThat(show("a\nb\tc\r\u001b[2J\u0000\u202eevil\\", 1024))
                .isEqualTo("a\\nb\\tc\\r\\u001b[2J\\u0000\\u202eevil\\\\");
    }

    @Test
    void aPayloadThatIsNotUtf8IsShownAsHex() {
        assertThat(SafePayload.show(new byte[] {0, (byte) 0xff, 0x1b, 'A'}, 1024))
                .isEqualTo("hex: 00 ff 1b 41");
    }

    @Test
    void aLongPayloadIsCappedAndSaysHowMuchWasLeftOut() {
        assertThat(show("x".repeat(2000), 10)).isEqualTo("xxxxxxxxxx ... (1990 more bytes)");
        assertThat(SafePayload.show(new byte[100], 4)).isEqualTo("\\u0000\\u0000\\u0000\\u0000 ... (96 more bytes)");
    }

    @Test
    void aCapThatCutsACharacterInTwoIsStillText() {
        // "é" is two bytes: a cap after its first byte shows the text before it, not hex.
        assertThat(show("aé", 2)).isEqualTo("a ... (2 more bytes)");
    }

    @Test
    void binaryCutByTheCapIsStillHex() {
        assertThat(SafePayload.show(new byte[] {(byte) 0xff, (byte) 0xfe, (byte) 0xfd, (byte) 0xfc, 1, 2}, 4))
                .isEqualTo("hex: ff fe fd fc ... (2 more bytes)");
    }
}
