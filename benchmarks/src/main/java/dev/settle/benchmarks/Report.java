package dev.settle.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.DoublePredicate;

/**
 * The table: one row per figure, each with what it is compared with (if anything) and its goal (if any). A figure
 * measured in rounds prints its median with its spread, its ratio as the median of the rounds' own ratios, and its
 * verdict with how many rounds met the goal ({@link Rounds}).
 */
final class Report {
    /** A number and how to print it. */
    record Figure(double value, String text) {
        static Figure of(double value, String format) {
            return new Figure(value, String.format(Locale.ROOT, format, value));
        }

        /** The rounds' median, printed with their spread. */
        static Figure of(Rounds rounds, String format) {
            return new Figure(rounds.median(), rounds.text(format));
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
     * @param against the hand-written loop's figure, the ideal, or the other build's, measured in the same run
     * @param ratio Settle's figure over {@code against}'s (in rounds: the median of each round's ratio)
     * @param goal the goal in words, empty when there is none
     * @param met whether the goal is met; empty when there is none
     * @param verdict what the last column prints: met or missed, with the rounds that met it
     */
    record Row(
            String measurement,
            Figure settle,
            Optional<Figure> against,
            Optional<Figure> ratio,
            String goal,
            Optional<Boolean> met,
            String verdict) {}

    private final String settleColumn;
    private final String againstColumn;
    private final List<Row> rows = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    Report() {
        this("Settle", "compared with");
    }

    /** A table whose two figure columns are headed {@code settleColumn} and {@code againstColumn}. */
    Report(String settleColumn, String againstColumn) {
        this.settleColumn = settleColumn;
        this.againstColumn = againstColumn;
    }

    /** A figure measured once. @param against may be null: nothing to compare with */
    void add(String measurement, Figure settle, Figure against, Goal goal) {
        Optional<Figure> base = Optional.ofNullable(against);
        Optional<Figure> ratio = base.map(b -> Figure.of(settle.value() / b.value(), "%.2f×"));
        Optional<Boolean> met = goal.test() == null
                ? Optional.empty()
                : Optional.of(
                        goal.test().test(goal.onRatio() ? ratio.orElseThrow().value() : settle.value()));
        rows.add(new Row(
                measurement,
                settle,
                base,
                ratio,
                goal.text(),
                met,
                met.map(m -> m ? "met" : "**missed**").orElse("")));
    }

    /**
     * A figure measured in rounds, Settle's against another contender's of the same rounds: medians with their
     * spread, the ratio of each round, and a goal met when the median meets it and enough rounds do
     * ({@link Rounds#judge}).
     */
    void add(String measurement, Rounds settle, String settleFormat, Rounds against, String againstFormat, Goal goal) {
        Rounds ratios = settle.over(against);
        Optional<Rounds.Verdict> verdict = goal.test() == null
                ? Optional.empty()
                : Optional.of((goal.onRatio() ? ratios : settle).judge(goal.test()));
        rows.add(new Row(
                measurement,
                Figure.of(settle, settleFormat),
                Optional.of(Figure.of(against, againstFormat)),
                Optional.of(Figure.of(ratios, "%.2f×")),
                goal.text(),
                verdict.map(Rounds.Verdict::met),
                verdict.map(Rounds.Verdict::text).orElse("")));
    }

    /**
     * A figure measured in rounds with nothing to compare it with: its median with its spread, and a goal on the
     * figure itself met when the median meets it and enough rounds do ({@link Rounds#judge}).
     */
    void add(String measurement, Rounds settle, String format, Goal goal) {
        Optional<Rounds.Verdict> verdict =
                goal.test() == null ? Optional.empty() : Optional.of(settle.judge(goal.test()));
        rows.add(new Row(
                measurement,
                Figure.of(settle, format),
                Optional.empty(),
                Optional.empty(),
                goal.text(),
                verdict.map(Rounds.Verdict::met),
                verdict.map(Rounds.Verdict::text).orElse("")));
    }

    void note(String note) {
        notes.add(note);
    }

    List<Row> rows() {
        return List.copyOf(rows);
    }

    String markdown() {
        StringBuilder table = new StringBuilder();
        table.append("| measurement | ")
                .append(settleColumn)
                .append(" | ")
                .append(againstColumn)
                .append(" | ratio | goal | |\n");
        table.append("|---|---:|---:|---:|---|---|\n");
        for (Row row : rows) {
            table.append("| ")
                    .append(row.measurement())
                    .append(" | ")
                    .append(row.settle().text())
                    .append(" | ")
                    .append(row.against().map(Figure::text).orElse(""))
                    .append(" | ")
                    .append(row.ratio().map(Figure::text).orElse(""))
                    .append(" | ")
                    .append(row.goal())
                    .append(" | ")
                    .append(row.verdict())
                    .append(" |\n");
        }
        for (String note : notes) {
            table.append('\n').append(note).append('\n');
        }
        return table.toString();
    }
}
