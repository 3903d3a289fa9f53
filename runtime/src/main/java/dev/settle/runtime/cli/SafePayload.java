package dev.settle.runtime.cli;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * A payload as a terminal can show it: UTF-8 text with every control and format character escaped (so a payload
 * cannot move the cursor, clear the screen or reverse the text after it), or hex when it is not UTF-8; at most
 * {@code cap} bytes, then how many were left out.
 */
final class SafePayload {
    private SafePayload() {}

    static String show(byte[] payload, int cap) {
        int shown = Math.min(payload.length, cap);
        String rest = payload.length > shown ? " ... (" + (payload.length - shown) + " more bytes)" : "";
        String text = utf8(payload, shown);
        if (text == null) {
            return "hex: " + HexFormat.ofDelimiter(" ").formatHex(payload, 0, shown) + rest;
        }
        return escape(text) + rest;
    }

    /** The text of the first {@code length} bytes, or null when they are not UTF-8 (a cut last character aside). */
    private static String utf8(byte[] payload, int length) {
        // A cap may cut a multi-byte character in two: up to 3 bytes are given back rather than called binary.
        for (int end = length; end >= Math.max(0, length - 3); end--) {
            try {
                CharBuffer chars = StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(payload, 0, end));
                return chars.toString();
            } catch (CharacterCodingException notUtf8) {
                if (length == payload.length) {
                    return null; // nothing was cut: the payload itself is not UTF-8
                }
            }
        }
        return null;
    }

    static String escape(String text) {
        StringBuilder escaped = new StringBuilder(text.length());
        text.codePoints().forEach(c -> {
            switch (c) {
                case '\n' -> escaped.append("\\n");
                case '\r' -> escaped.append("\\r");
                case '\t' -> escaped.append("\\t");
                case '\\' -> escaped.append("\\\\");
                default -> {
                    int type = Character.getType(c);
                    if (type == Character.CONTROL
                            || type == Character.FORMAT
                            || type == Character.LINE_SEPARATOR
                            || type == Character.PARAGRAPH_SEPARATOR) {
                        escaped.append(String.format(c > 0xFFFF ? "\\U%08x" : "\\u%04x", c));
                    } else {
                        escaped.appendCodePoint(c);
                    }
                }
            }
        });
        return escaped.toString();
    }
}
