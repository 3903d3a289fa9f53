package dev.settle.runtime.cli;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * A payload as a terminal can show it: UTF-8 text escaped by {@link Printable} (so a payload cannot move the cursor,
 * clear the screen or reverse the text after it), or hex when it is not UTF-8; at most
 * {@code cap} bytes, then how many were left out.
 */
final class SafePayload {
    private SafePayload() {}

    static String show(byte[] payload, int cap) {
        int length = Math.min(payload.length, cap);
        boolean cut = length < payload.length;
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(payload, 0, length);
        CharBuffer text = CharBuffer.allocate(length);
        // Not the end of the input when the cap cut it: a character cut in two is then left out, not called binary.
        CoderResult result = decoder.decode(in, text, !cut);
        if (!result.isError() && !cut) {
            result = decoder.flush(text);
        }
        if (result.isError() || (!cut && in.hasRemaining())) {
            return "hex: " + HexFormat.ofDelimiter(" ").formatHex(payload, 0, length) + more(payload.length - length);
        }
        return Printable.text(text.flip().toString()) + more(payload.length - in.position());
    }

    private static String more(int bytes) {
        return bytes == 0 ? "" : " ... (" + bytes + " more bytes)";
    }
}
