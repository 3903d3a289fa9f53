package dev.settle.runtime.driver;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Strict UTF-8 for a {@code String} handler's raw payload. Pulsar's {@code Schema.STRING} replaces malformed bytes
 * with U+FFFD, so a binary payload would reach the handler as plausible-looking text; here it is a decode failure.
 */
final class Utf8Text {
    private Utf8Text() {}

    /**
     * @return the text {@code data} encodes
     * @throws IllegalArgumentException naming the offset of the first byte that is not valid UTF-8
     */
    static String decode(byte[] data) {
        // A decoder keeps state between calls, so one per payload; it is cheap next to a broker round trip.
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(data);
        CharBuffer out = CharBuffer.allocate(data.length);
        CoderResult result = decoder.decode(in, out, true);
        if (result.isUnderflow()) {
            result = decoder.flush(out);
        }
        if (result.isError()) {
            int at = in.position();
            throw new IllegalArgumentException("byte " + at + " (0x" + String.format("%02x", data[at] & 0xff) + ") of "
                    + data.length + " is not valid UTF-8");
        }
        return out.flip().toString();
    }
}
