package dev.settle.runtime.cli;

/**
 * Text from a message or a record as a terminal can show it, the one way every command prints such text (a key, a
 * property, a {@code REAL_TOPIC}, a code-store field, a server's words): line breaks, tabs and backslashes written out,
 * every other control or format character (ESC and the ANSI sequences it starts, bidirectional overrides, zero-width
 * characters) and line or paragraph separators as {@code \\uXXXX}, so the text cannot move the cursor, clear the
 * screen, forge a line of its own or reverse what follows it. Issue 40: a crafted {@code REAL_TOPIC} printed by
 * {@code dlq replay} cleared the screen and printed a fake "ALL LETTERS REPLAYED OK".
 */
final class Printable {
    private Printable() {}

    /** {@code value} as text ({@code null} for none), escaped. */
    static String text(Object value) {
        String text = String.valueOf(value);
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
                            || type == Character.PARAGRAPH_SEPARATOR
                            // A lone half of a surrogate pair: no terminal shows it as one character.
                            || type == Character.SURROGATE) {
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
