package dev.settle.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The live heap: used bytes right after full collections, here or in a child's GC log. */
final class Heap {
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private Heap() {}

    static long usedAfterGc() throws InterruptedException {
        // Several rounds: one collection can leave objects that only the next one frees (finalizable, soft).
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return MEMORY.getHeapMemoryUsage().getUsed();
    }

    private static final Pattern COLLECTION =
            Pattern.compile("^\\[(\\d+\\.\\d+)s].*\\[gc] GC\\(\\d+\\) .* \\d+M->(\\d+)M\\(");

    /**
     * Each collection of a {@code -Xlog:gc} log (its default decorations: uptime first) as {uptime in ms, heap after
     * it in MiB}, in order.
     */
    static List<double[]> afterGc(List<String> gcLog) {
        List<double[]> collections = new ArrayList<>();
        for (String line : gcLog) {
            Matcher matcher = COLLECTION.matcher(line);
            if (matcher.find()) {
                collections.add(
                        new double[] {Double.parseDouble(matcher.group(1)) * 1000, Double.parseDouble(matcher.group(2))
                        });
            }
        }
        return collections;
    }

    /**
     * The least heap after the collections between {@code from} and {@code to} (uptime, ms), NaN for none: the
     * closest a young collection comes to the live set (its other figures carry old garbage not yet collected).
     */
    static double leastMiB(List<double[]> collections, double from, double to) {
        return collections.stream()
                .filter(c -> c[0] >= from && c[0] <= to)
                .mapToDouble(c -> c[1])
                .min()
                .orElse(Double.NaN);
    }
}
