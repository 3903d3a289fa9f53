package dev.settle.examples.orders;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads one flat JSON object ({@code {"id": "o-1", "quantity": 3}}) into its members, values as text.
 *
 * <p>Hand-written so that the example JAR needs nothing beside the SDK. Nested objects and arrays are not
 * orders, so they are rejected, as is anything after the closing brace. A real handler would bundle Jackson in its
 * JAR (Settle loads it in the handler's own class loader) or declare {@code Handler<Order>} and let the runtime
 * decode JSON.
 */
final class FlatJson {

    private final String text;
    private int position;

    private FlatJson(String text) {
        this.text = text;
    }

    /**
     * The members of the object, in order; a string value without its quotes, a number, {@code true}, {@code false}
     * as written, and {@code null} as a Java {@code null}.
     */
    static Map<String, String> parse(String text) throws MalformedOrderException {
        FlatJson parser = new FlatJson(text);
        Map<String, String> members = parser.object();
        parser.skipWhitespace();
        if (parser.position != text.length()) {
            throw parser.malformed("unexpected text after the closing '}'");
        }
        return members;
    }

    private Map<String, String> object() throws MalformedOrderException {
        skipWhitespace();
        expect('{');
        Map<String, String> members = new LinkedHashMap<>();
        skipWhitespace();
        if (peek() == '}') {
            position++;
            return members;
        }
        while (true) {
            skipWhitespace();
            String name = string();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            if (members.containsKey(name)) {
                throw malformed("duplicate member \"" + name + "\"");
            }
            members.put(name, value());
            skipWhitespace();
            char next = next();
            if (next == '}') {
                return members;
            }
            if (next != ',') {
                position--;
                throw malformed("expected ',' or '}'");
            }
        }
    }

    private String value() throws MalformedOrderException {
        char first = peek();
        if (first == '"') {
            return string();
        }
        if (first == '{' || first == '[') {
            throw malformed("nested objects and arrays are not part of an order");
        }
        int start = position;
        while (position < text.length() && ",} \t\r\n".indexOf(text.charAt(position)) < 0) {
            position++;
        }
        String literal = text.substring(start, position);
        if (literal.equals("null")) {
            return null;
        }
        if (literal.equals("true") || literal.equals("false") || literal.matches("-?\\d+(\\.\\d+)?([eE][+-]?\\d+)?")) {
            return literal;
        }
        position = start;
        throw malformed("expected a value");
    }

    private String string() throws MalformedOrderException {
        expect('"');
        StringBuilder value = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '"') {
                return value.toString();
            }
            if (c != '\\') {
                value.append(c);
                continue;
            }
            char escaped = next();
            switch (escaped) {
                case '"', '\\', '/' -> value.append(escaped);
                case 'b' -> value.append('\b');
                case 'f' -> value.append('\f');
                case 'n' -> value.append('\n');
                case 'r' -> value.append('\r');
                case 't' -> value.append('\t');
                case 'u' -> value.append(unicodeEscape());
                default -> throw malformed("unknown escape \\" + escaped);
            }
        }
    }

    private char unicodeEscape() throws MalformedOrderException {
        if (position + 4 > text.length()) {
            throw malformed("incomplete \\u escape");
        }
        try {
            char c = (char) Integer.parseInt(text.substring(position, position + 4), 16);
            position += 4;
            return c;
        } catch (NumberFormatException e) {
            throw malformed("bad \\u escape");
        }
    }

    private void expect(char expected) throws MalformedOrderException {
        if (position >= text.length() || text.charAt(position) != expected) {
            throw malformed("expected '" + expected + "'");
        }
        position++;
    }

    private char peek() throws MalformedOrderException {
        if (position >= text.length()) {
            throw malformed("unexpected end");
        }
        return text.charAt(position);
    }

    private char next() throws MalformedOrderException {
        char c = peek();
        position++;
        return c;
    }

    private void skipWhitespace() {
        while (position < text.length() && Character.isWhitespace(text.charAt(position))) {
            position++;
        }
    }

    private MalformedOrderException malformed(String problem) {
        return new MalformedOrderException(problem + " at character " + (position + 1));
    }
}
