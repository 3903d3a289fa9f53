package dev.settle.benchmarks;

import java.util.Arrays;
import java.util.Locale;
import java.util.function.DoublePredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One figure of one contender, measured once per round: its median and its spread (least and most), and whether a
 * goal holds. A goal is met when it holds for the median and in at least {@link #needed} of the rounds (4 of 5): a
 * median that meets it by luck in a run whose rounds mostly miss it does not count.
 */
final class Rounds {
    /** The share of rounds a goal must hold in besides the median: 4 of 5, 3 of 3, 1 of 1. */
    private static final double SHARE_NEEDED = 0.8;

    /** The first {@code %...f} of a format: how its number alone is printed. */
    private static final Pattern NUMBER = Pattern.compile("%[-#+ 0,(]*\\d*(?:\\.\\d+)?f");

    private final double[] values;

    private Rounds(double[] values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no rounds: a figure needs at least one");
        }
        this.values = values.clone();
    }

    /** @param values one per round, in the order the rounds ran */
    static Rounds of(double... values) {
        return new Rounds(values);
    }

    double min() {
        return Arrays.stream(values).min().orElseThrow();
    }

    double max() {
        return Arrays.stream(values).max().orElseThrow();
    }

    double median() {
        return Stats.median(values);
    }

    /**
     * Each round's value divided by {@code base}'s value in the same round. The contenders of a round ran back to
     * back on the same broker, so their ratio leaves out most of what moves from round to round (a warming broker,
     * another process on the machine).
     */
    Rounds over(Rounds base) {
        if (base.values.length != values.length) {
            throw new IllegalArgumentException(
                    "rounds differ in number: " + values.length + " against " + base.values.length);
        }
        double[] ratios = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            // A base of zero (a broker CPU figure below the clock's resolution, in smoke runs) has no ratio.
            ratios[i] = base.values[i] == 0 ? Double.NaN : values[i] / base.values[i];
        }
        return new Rounds(ratios);
    }

    /** Whether {@code goal} holds for the median and in at least {@link #needed} rounds. */
    Verdict judge(DoublePredicate goal) {
        int held = (int) Arrays.stream(values).filter(goal).count();
        return new Verdict(goal.test(median()) && held >= needed(values.length), held, values.length);
    }

    /** Of {@code rounds}, how many a goal must hold in: 4 of 5, 3 of 3 (at least 80%, at least one). */
    static int needed(int rounds) {
        return Math.max(1, (int) Math.ceil(rounds * SHARE_NEEDED - 1e-9));
    }

    /**
     * The median in {@code format}, then the least and most in its number's own format: {@code "loop %,.0f msg/s"}
     * gives {@code "loop 12,345 msg/s (11,020–13,480)"}. One round prints its value alone; a median that is no number
     * (a ratio of zero to zero: no redelivery on either side) prints as a dash.
     */
    String text(String format) {
        if (Double.isNaN(median())) {
            return "–";
        }
        String median = String.format(Locale.ROOT, format, median());
        if (values.length == 1) {
            return median;
        }
        Matcher number = NUMBER.matcher(format);
        String each = number.find() ? number.group() : "%s";
        return median + " (" + String.format(Locale.ROOT, each, min()) + "–" + String.format(Locale.ROOT, each, max())
                + ")";
    }

    /** A goal's verdict over the rounds. */
    record Verdict(boolean met, int roundsMet, int rounds) {
        /** {@code met, 5 of 5 rounds} or {@code **missed**, 3 of 5 rounds}, as the table prints it. */
        String text() {
            return (met ? "met" : "**missed**") + ", " + roundsMet + " of " + rounds
                    + (rounds == 1 ? " round" : " rounds");
        }
    }
}
