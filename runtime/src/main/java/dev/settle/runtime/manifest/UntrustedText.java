package dev.settle.runtime.manifest;

/**
 * Text from outside the runtime's control (a package server's error body, a handler's exception message) made safe
 * for one log line or one {@code validate} problem: control characters, line breaks, ANSI escapes and bidirectional
 * overrides are written as {@code \\uXXXX} ({@code \\n}, {@code \\r}, {@code \\t} for the usual ones), so the text
 * cannot forge a line of its own, recolour a terminal or reorder what is read; and it is cut to a length.
 */
public final class UntrustedText {
    private UntrustedText() {}

    /** {@code text} escaped and cut to at most {@code max} characters of the original, with "…" when cut. */
    public static String escape(String text, int max) {
        if (text == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(Math.min(text.length(), max) + 16);
        int end = Math.min(text.length(), max);
        for (int i = 0; i < end; i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (unsafe(c)) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        if (text.length() > max) {
            out.append('…');
        }
        return out.toString();
    }

    /** As {@link #escape(String, int)}, up to 1000 characters. */
    public static String escape(String text) {
        return escape(text, 1000);
    }

    private static boolean unsafe(char c) {
        return Character.isISOControl(c) // C0, DEL and C1, ESC (ANSI sequences) among them
                || c == '\u2028'
                || c == '\u2029' // line and paragraph separators
                || (c >= '\u202a' && c <= '\u202e') // bidirectional embeddings and overrides
                || (c >= '\u2066' && c <= '\u2069') // bidirectional isolates
                || c == '\u200e'
                || c == '\u200f';
    }
}
