package dev.settle.runtime.manifest;

/**
 * JSON string literals: where the manifest hands JSON on ({@code authParams} written as a mapping), and the admin API's
 * answers.
 */
public final class JsonText {
    private JsonText() {}

    /** {@code text} as a JSON string literal, quotes included. */
    public static String quote(String text) {
        StringBuilder json = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\r' -> json.append("\\r");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20) {
                        json.append(String.format("\\u%04x", (int) c));
                    } else {
                        json.append(c);
                    }
                }
            }
        }
        return json.append('"').toString();
    }
}
