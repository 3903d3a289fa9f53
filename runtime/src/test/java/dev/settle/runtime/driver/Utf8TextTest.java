package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

/** A String handler's raw payload is strict UTF-8, where Schema.STRING would quietly substitute U+FFFD. */
class Utf8TextTest {

    @Test
    void validUtf8OfOneToFourBytesACharacterDecodesToTheSameText() {
        String text = "a é € 𝄞";
        assertThat(Utf8Text.decode(text.getBytes(StandardCharsets.UTF_8))).isEqualTo(text);
        assertThat(Utf8Text.decode(new byte[0])).isEmpty();
    }

    @Test
    void aMalformedSequenceIsRefusedNamingItsOffsetAndByte() {
        byte[] malformed = {'o', 'k', (byte) 0xC3, '('};
        // What Pulsar's own string schema would have handed the handler instead.
        assertThat(Schema.STRING.decode(malformed)).isEqualTo("ok\uFFFD(");
        assertThatThrownBy(() -> Utf8Text.decode(malformed))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("byte 2 (0xc3) of 4 is not valid UTF-8");
    }

    @Test
    void aSequenceCutShortAtTheEndIsRefused() {
        byte[] euro = "€".getBytes(StandardCharsets.UTF_8);
        byte[] cut = {'x', euro[0], euro[1]};
        assertThatThrownBy(() -> Utf8Text.decode(cut)).hasMessage("byte 1 (0xe2) of 3 is not valid UTF-8");
    }

    @Test
    void anEncodedSurrogateIsRefused() {
        // CESU-8 style: a surrogate half encoded on its own is not UTF-8.
        byte[] surrogate = {(byte) 0xED, (byte) 0xA0, (byte) 0x80};
        assertThatThrownBy(() -> Utf8Text.decode(surrogate)).hasMessageStartingWith("byte 0 (0xed) of 3");
    }
}
