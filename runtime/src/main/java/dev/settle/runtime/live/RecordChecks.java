package dev.settle.runtime.live;

import dev.settle.runtime.manifest.UntrustedText;
import java.util.regex.Pattern;

/**
 * A code-store record's fields checked as data before any of them is used (issue 40): the record comes from a file
 * or a topic anyone with write access may have written, and its sha256 becomes a file name in the cache and a
 * package version in a URL. A crafted {@code sha256} of {@code ../x} deleted, overwrote and created {@code *.jar}
 * files outside the cache and sent {@code ../} paths to the broker. Each check names the field and the value
 * (escaped) and says what is expected.
 */
final class RecordChecks {
    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
    private static final Pattern WHOLE = Pattern.compile("[0-9]{1,9}");
    /** A Java class name, binary form: what a handler is named by (and nothing a path or a URL acts on). */
    private static final Pattern CLASS_NAME =
            Pattern.compile("\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*(\\.\\p{javaJavaIdentifierStart}"
                    + "\\p{javaJavaIdentifierPart}*)*");

    private RecordChecks() {}

    /**
     * @return {@code value}, 64 lowercase hex digits
     * @throws IllegalArgumentException otherwise
     */
    static String sha256(String field, String value) {
        if (value == null || !SHA256.matcher(value).matches()) {
            throw refused(field, value, "must be a sha256: 64 lowercase hex digits");
        }
        return value;
    }

    /** As {@link #sha256}, or empty: a manifest's generation, whose JAR was not digested. */
    static String sha256OrEmpty(String field, String value) {
        return value != null && value.isEmpty() ? value : sha256(field, value);
    }

    /**
     * @return {@code value} as a generation number, 1 or more
     * @throws IllegalArgumentException otherwise
     */
    static int generation(String field, String value) {
        if (value == null || !WHOLE.matcher(value.strip()).matches() || Integer.parseInt(value.strip()) < 1) {
            throw refused(field, value, "must be a generation number: a whole number, 1 or more");
        }
        return Integer.parseInt(value.strip());
    }

    /** A generation number already read, checked the same way. */
    static int generation(String field, int value) {
        if (value < 1) {
            throw refused(field, Integer.toString(value), "must be a generation number: a whole number, 1 or more");
        }
        return value;
    }

    /**
     * @return {@code value}, a plain class name ({@code com.acme.OrderHandler}, {@code Outer$Inner})
     * @throws IllegalArgumentException otherwise
     */
    static String className(String field, String value) {
        if (value == null || value.length() > 500 || !CLASS_NAME.matcher(value).matches()) {
            throw refused(field, value, "must be a class name, such as com.acme.OrderHandler");
        }
        return value;
    }

    private static IllegalArgumentException refused(String field, String value, String expected) {
        return new IllegalArgumentException(field + " " + expected + ", was "
                + (value == null ? "missing" : "'" + UntrustedText.escape(value, 100) + "'"));
    }
}
