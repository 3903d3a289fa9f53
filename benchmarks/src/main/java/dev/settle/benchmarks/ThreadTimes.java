package dev.settle.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Where a drain's CPU went, thread by thread: the CPU time of every thread of the broker's process and the consumer's,
 * and the machine's busy and idle time, read from Linux's {@code /proc} as a marker arrives (issue 51: a goal that
 * cannot be met is shown in numbers). Between two snapshots, a thread's share of one core says whether it bounded the
 * drain (a thread near 100% is as fast as that thread goes), and the machine's busy cores whether the drain had the
 * CPU it could use. The kernel counts in ticks (10 ms); over a drain of seconds that is a fraction of a percent. On a
 * system without {@code /proc} a snapshot is empty and {@link #between} says nothing.
 */
final class ThreadTimes {
    private static final Path PROC = Path.of("/proc");

    /** A thread's CPU ticks, with the process it belongs to ("broker", "consumer") and its name as the kernel has it. */
    record ThreadTicks(String process, String name, long ticks) {}

    /**
     * What one snapshot read: the machine's busy and total ticks (all cores) and each thread's, by process id and
     * thread id.
     */
    record Snapshot(long machineBusy, long machineTotal, Map<String, ThreadTicks> threads) {
        static final Snapshot NONE = new Snapshot(0, 0, Map.of());
    }

    /** One thread's share of a core between two snapshots. */
    record Busy(String name, double coreShare) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%s %.0f%%", name, coreShare * 100);
        }
    }

    /** The machine's busy cores and the busiest threads of each process (by the process's name) between two snapshots. */
    record Between(double busyCores, int cores, Map<String, List<Busy>> busiest) {
        static final Between NONE = new Between(Double.NaN, 0, Map.of());

        /** The busiest thread of {@code process}'s, if any used CPU. */
        java.util.Optional<Busy> top(String process) {
            return busiest.getOrDefault(process, List.of()).stream().findFirst();
        }

        /** The busiest thread of {@code process}'s share, 0 when none was seen. */
        double topShare(String process) {
            return top(process).map(Busy::coreShare).orElse(0.0);
        }

        /**
         * {@code broker: pulsar-io-4-2 97%, ...; consumer: ...; the machine 1.83 of 2 cores busy}: the {@code top}
         * busiest threads of each process, as a line under a drain.
         */
        String describe(int top) {
            if (cores == 0) {
                return "no /proc here: no thread's CPU";
            }
            String threads = busiest.entrySet().stream()
                    .map(process -> process.getKey() + ": "
                            + process.getValue().stream()
                                    .limit(top)
                                    .map(Busy::toString)
                                    .collect(Collectors.joining(", ")))
                    .collect(Collectors.joining("; "));
            return String.format(Locale.ROOT, "%s; the machine %.2f of %d cores busy", threads, busyCores, cores);
        }
    }

    private ThreadTimes() {}

    /** A snapshot of the processes {@code pids} (by the name to print) and of the machine. */
    static Snapshot take(Map<String, Long> pids) {
        long[] machine = machineTicks();
        if (machine == null) {
            return Snapshot.NONE;
        }
        Map<String, ThreadTicks> threads = new HashMap<>();
        pids.forEach((process, pid) -> {
            try (Stream<Path> tasks = Files.list(PROC.resolve(pid.toString()).resolve("task"))) {
                tasks.forEach(task -> {
                    ThreadTicks ticks = threadTicks(process, task.resolve("stat"));
                    if (ticks != null) {
                        threads.put(pid + "/" + task.getFileName(), ticks);
                    }
                });
            } catch (IOException | java.io.UncheckedIOException e) {
                // The process has ended: it has no threads to count.
            }
        });
        return new Snapshot(machine[0], machine[1], threads);
    }

    /** What happened between {@code from} and {@code to}: each process's threads, busiest first, and the machine. */
    static Between between(Snapshot from, Snapshot to) {
        long total = to.machineTotal() - from.machineTotal();
        int cores = Runtime.getRuntime().availableProcessors();
        if (total <= 0 || from.threads().isEmpty()) {
            return Between.NONE;
        }
        // The ticks of one core over the stretch: the machine's ticks are those of all its cores.
        double coreTicks = (double) total / cores;
        Map<String, List<Busy>> busiest = new java.util.TreeMap<>();
        to.threads().forEach((id, now) -> {
            ThreadTicks before = from.threads().get(id);
            long used = now.ticks() - (before == null ? 0 : before.ticks());
            if (used > 0) {
                busiest.computeIfAbsent(now.process(), p -> new ArrayList<>())
                        .add(new Busy(now.name(), used / coreTicks));
            }
        });
        busiest.values()
                .forEach(threads ->
                        threads.sort(Comparator.comparingDouble(Busy::coreShare).reversed()));
        return new Between((to.machineBusy() - from.machineBusy()) / coreTicks, cores, busiest);
    }

    /** The machine's busy and total ticks from {@code /proc/stat}'s first line; null without it. */
    private static long[] machineTicks() {
        try {
            String[] fields =
                    Files.readAllLines(PROC.resolve("stat")).get(0).trim().split("\\s+");
            // cpu user nice system idle iowait irq softirq steal ...: idle and iowait are the idle time.
            long busy = 0;
            long total = 0;
            for (int i = 1; i < Math.min(fields.length, 9); i++) {
                long ticks = Long.parseLong(fields[i]);
                total += ticks;
                if (i != 4 && i != 5) {
                    busy += ticks;
                }
            }
            return new long[] {busy, total};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * A thread's user and system ticks from its {@code stat}: {@code tid (name) state ...}, the times the 14th and 15th
     * fields; the name may hold spaces and parentheses, so the fields are counted from its last ')'. Null when the
     * thread ended meanwhile.
     */
    private static ThreadTicks threadTicks(String process, Path stat) {
        try {
            String line = Files.readString(stat);
            int open = line.indexOf('(');
            int close = line.lastIndexOf(')');
            String[] fields = line.substring(close + 2).trim().split(" ");
            // fields[0] is the state (the 3rd field): utime is the 14th, stime the 15th.
            return new ThreadTicks(
                    process, line.substring(open + 1, close), Long.parseLong(fields[11]) + Long.parseLong(fields[12]));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
