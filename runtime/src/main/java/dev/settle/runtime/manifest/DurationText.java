package dev.settle.runtime.manifest;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as the manifest writes them: {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h}, or ISO-8601. */
public final class DurationText {
    static final String FORMS = "'500ms', '30s', '5m', '1h' or ISO-8601 'PT30S'";

    private static final Pattern SHORT = Pattern.compile("(\\d{1,9})(ms|s|m|h)");

    private DurationText() {}

    /**
     * Parses a duration, which must be positive and in whole milliseconds (the Pulsar client's unit).
     *
     * @throws IllegalArgumentException with a message that completes "must be ...", naming the accepted forms
     */
    public static Duration parse(String text) {
        Duration duration = parseAnySign(text.strip());
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("must be positive, was '" + text + "'");
        }
        if (duration.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException("must be whole milliseconds, was '" + text + "'");
        }
        return duration;
    }

    /**
     * Parses a duration that may be zero ({@code 0ms}), for a wait that can be left out; otherwise as {@link #parse}.
     *
     * @throws IllegalArgumentException with a message that completes "must be ...", naming the accepted forms
     */
    public static Duration parseZeroOrMore(String text) {
        Duration duration = parseAnySign(text.strip());
        if (duration.isNegative()) {
            throw new IllegalArgumentException("must not be negative, was '" + text + "'");
        }
        if (duration.getNano() % 1_000_000 != 0) {
            throw new IllegalArgumentException("must be whole milliseconds, was '" + text + "'");
        }
        return duration;
    }

    private static Duration parseAnySign(String text) {
        Matcher matcher = SHORT.matcher(text);
        if (matcher.matches()) {
            long amount = Long.parseLong(matcher.group(1));
            switch (matcher.group(2)) {
                case "ms":
                    return Duration.ofMillis(amount);
                case "s":
                    return Duration.ofSeconds(amount);
                case "m":
                    return Duration.ofMinutes(amount);
                default:
                    return Duration.ofHours(amount);
            }
        }
        if (text.startsWith("P") || text.startsWith("p") || text.startsWith("-P")) {
            try {
                return Duration.parse(text);
            } catch (DateTimeParseException | ArithmeticException e) {
                // falls through to the message that names every accepted form
            }
        }
        if (text.matches("\\d+")) {
            throw new IllegalArgumentException(
                    "must be a duration with a unit, such as '" + text + "s' or '" + text + "ms', was '" + text + "'");
        }
        throw new IllegalArgumentException("must be a duration such as " + FORMS + ", was '" + text + "'");
    }

    /** The shortest manifest spelling of a duration that {@link #parse} accepts. */
    public static String format(Duration duration) {
        long millis = duration.toMillis();
        if (millis == 0 || millis % 1000 != 0) {
            return millis + "ms";
        }
        long seconds = millis / 1000;
        if (seconds % 3600 == 0) {
            return seconds / 3600 + "h";
        }
        if (seconds % 60 == 0) {
            return seconds / 60 + "m";
        }
        return seconds + "s";
    }

    /**
     * A measured duration, readable at a glance: "250 ms", "1.5 s", "75 s". Settings are written the manifest's
     * way ({@link #format}); what was measured is rounded down to a tenth of a second above one second.
     */
    public static String elapsed(Duration duration) {
        long millis = duration.toMillis();
        if (millis < 1000) {
            return millis + " ms";
        }
        long tenths = millis / 100;
        return (tenths % 10 == 0 ? Long.toString(tenths / 10) : (tenths / 10) + "." + (tenths % 10)) + " s";
    }
}
