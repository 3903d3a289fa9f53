package dev.settle.quickstart;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.util.List;

/**
 * The quickstart's figures, read from Settle's own metrics registry (the same numbers /metrics serves), and the
 * keys of the orders that reached the dead-letter topic.
 */
record Summary(
        long deliveries,
        long ack,
        long retry,
        long retryAfter,
        long drop,
        long none,
        long error,
        long deadLettered,
        List<String> deadLetters) {

    Summary {
        deadLetters = List.copyOf(deadLetters);
    }

    static Summary read(PrometheusRegistry registry, List<String> deadLetters) {
        long deliveries = 0;
        long deadLettered = 0;
        long[] outcomes = new long[6];
        for (MetricSnapshot snapshot : registry.scrape()) {
            if (!(snapshot instanceof CounterSnapshot counter)) {
                continue;
            }
            String name = counter.getMetadata().getName();
            for (CounterSnapshot.CounterDataPointSnapshot point : counter.getDataPoints()) {
                long value = (long) point.getValue();
                switch (name) {
                    case "settle_deliveries" -> deliveries += value;
                    case "settle_dead_lettered" -> deadLettered += value;
                    case "settle_outcomes" -> {
                        int index = List.of("ack", "retry", "retry_after", "drop", "none", "error")
                                .indexOf(point.getLabels().get("outcome"));
                        if (index >= 0) {
                            outcomes[index] += value;
                        }
                    }
                    default -> {}
                }
            }
        }
        return new Summary(
                deliveries,
                outcomes[0],
                outcomes[1],
                outcomes[2],
                outcomes[3],
                outcomes[4],
                outcomes[5],
                deadLettered,
                deadLetters.stream().sorted().toList());
    }

    String table() {
        return String.join(
                "\n",
                "",
                "| outcome                        | count |",
                "|--------------------------------|------:|",
                row("deliveries (handler calls)", deliveries),
                row("ack", ack),
                row("retry", retry),
                row("retry_after", retryAfter),
                row("drop", drop),
                row("none", none),
                row("error", error),
                row("dead-lettered", deadLettered),
                "",
                "dead-letter topic " + Quickstart.DEAD_LETTERS + ": " + (deadLetters.isEmpty() ? "empty" : deadLetters),
                "");
    }

    private static String row(String label, long value) {
        return String.format("| %-30s | %5d |", label, value);
    }
}
