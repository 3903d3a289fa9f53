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
}
