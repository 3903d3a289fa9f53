package dev.settle.benchmarks.handlers;

import java.lang.management.ManagementFactory;

/**
 * The lines a benchmarked process prints for the harness: {@code BENCH <name> <numbers...>} on stdout. A consumer's
 * markers carry the wall clock (epoch milliseconds, comparable with the harness's), {@code System.nanoTime()} (for
 * durations inside the process) and the process's own CPU time so far, so its CPU per message excludes start-up.
 */
public final class Marker {
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private Marker() {}

    /** Prints {@code BENCH <name> <epochMillis> <nanoTime> <processCpuNanos>}. */
    public static void now(String name) {
        if (Boolean.getBoolean("settle.bench.threads")) {
            threads(name);
        }
        long millis = System.currentTimeMillis();
        long nanos = System.nanoTime();
        print(name, millis, nanos, OS.getProcessCpuTime());
    }

    /** Prints {@code BENCH <name> <values...>}. */
    public static void print(String name, long... values) {
        StringBuilder line = new StringBuilder("BENCH ").append(name);
        for (long value : values) {
            line.append(' ').append(value);
        }
        System.out.println(line);
        System.out.flush();
    }

    private static final java.util.Map<String, Long> FIRST = new java.util.concurrent.ConcurrentHashMap<>();

    /** With {@code -Dsettle.bench.threads=true}: each thread's CPU (Linux, /proc) between the first and last marker. */
    private static void threads(String name) {
        java.util.Map<String, Long> now = new java.util.HashMap<>();
        try (var tasks = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/task"))) {
            for (java.nio.file.Path task : (Iterable<java.nio.file.Path>) tasks::iterator) {
                try {
                    String comm = java.nio.file.Files.readString(task.resolve("comm"))
                            .trim()
                            .replaceAll("[0-9]+", "N");
                    String stat = java.nio.file.Files.readString(task.resolve("stat"));
                    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
                    now.merge(comm + "#" + task.getFileName(), ticks, Long::sum);
                } catch (java.io.IOException | RuntimeException gone) {
                    // a thread that ended
                }
            }
        } catch (java.io.IOException e) {
            return;
        }
        if (name.equals("first")) {
            FIRST.putAll(now);
        } else if (name.equals("last")) {
            java.util.Map<String, Long> byName = new java.util.TreeMap<>();
            now.forEach((k, v) ->
                    byName.merge(k.substring(0, k.indexOf('#')), (v - FIRST.getOrDefault(k, 0L)) * 10, Long::sum));
            byName.forEach((k, v) -> {
                if (v > 0) System.out.println("THREAD " + v + " ms " + k);
            });
        }
    }
}
