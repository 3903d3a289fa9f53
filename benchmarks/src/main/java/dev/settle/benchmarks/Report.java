package dev.settle.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.DoublePredicate;

/** The table: one row per figure, each with what it is compared with (if anything) and its goal (if any). */
final class Report {
    /** A number and how to print it. */
    record Figure(double value, String text) {
        static Figure of(double value, String format) {
            return new Figure(value, String.format(java.util.Locale.ROOT, format, value));
        }
    }

    /** A goal of issue 9, judged on the ratio to what the row is compared with, or on Settle's own figure. */
    record Goal(String text, boolean onRatio, DoublePredicate test) {
        static final Goal NONE = new Goal("", false, null);

        static Goal ratio(String text, DoublePredicate test) {
            return new Goal(text, true, test);
        }

        static Goal value(String text, DoublePredicate test) {
            return new Goal(text, false, test);
        }
    }

    /**
     * @param against the hand-written loop's figure, or the ideal, measured in the same run
     * @param goal the goal in words, empty when there is none
     * @param met whether the goal is met; empty when there is none
     */
    record Row(String measurement, Figure settle, Optional<Figure> against, String goal, Optional<Boolean> met) {
        Optional<Double> ratio() {
            return against.map(base -> settle.value() / base.value());
        }
    }

    private final List<Row> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    /** @param against may be null: nothing to compare with */
    void add(String measurement, Figure settle, Figure against, Goal goal) {
        Optional<Figure> base = Optional.ofNullable(against);
        Optional<Boolean> met = goal.test() == null
                ? Optional.empty()
                : Optional.of(goal.test().test(goal.onRatio() ? settle.value() / against.value() : settle.value()));
        rows.add(new Row(measurement, settle, base, goal.text(), met));
    }

    void note(String note) {
        notes.add(note);
    }

    List<Row> rows() {
        return List.copyOf(rows);
    }

    String markdown() {
        StringBuilder table = new StringBuilder();
        table.append("| measurement | Settle | compared with | ratio | goal | |\n");
        table.append("|---|---:|---:|---:|---|---|\n");
        for (Row row : rows) {
            table.append("| ")
                    .append(row.measurement())
                    .append(" | ")
                    .append(row.settle().text())
                    .append(" | ")
                    .append(row.against().map(Figure::text).orElse(""))
                    .append(" | ")
                    .append(row.ratio()
                            .map(r -> String.format(java.util.Locale.ROOT, "%.2f×", r))
                            .orElse(""))
                    .append(" | ")
                    .append(row.goal())
                    .append(" | ")
                    .append(row.met().map(met -> met ? "met" : "**missed**").orElse(""))
                    .append(" |\n");
        }
        for (String note : notes) {
            table.append('\n').append(note).append('\n');
        }
        return table.toString();
    }
}
