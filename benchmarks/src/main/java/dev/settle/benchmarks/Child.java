package dev.settle.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A benchmarked process: its output goes to a log file, and its {@code BENCH <name> <numbers...>} lines (see
 * {@code handlers.Marker}) can be awaited by name. Each consumer runs in a child of its own so that its CPU time is
 * its own, not the broker's.
 */
final class Child implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path log;
    private final Map<String, long[]> marks = new HashMap<>();
    /** What {@link #probe} read as each mark's line arrived. Guarded by this. */
    private final Map<String, BrokerSample> probed = new HashMap<>();
    /** The broker's and this child's threads as each mark's line arrived, when probed. Guarded by this. */
    private final Map<String, ThreadTimes.Snapshot> threads = new HashMap<>();

    private final Supplier<BrokerSample> probe;
    private final Deque<String> tail = new ArrayDeque<>();
    /** The child's {@code SETTINGS} line ({@link SettingsInForce}), or null. Guarded by this. */
    private String settings;
    /** The output has ended: every line is in {@link #marks}. Guarded by this. */
    private boolean ended;

    private Child(String name, Process process, Path log, Supplier<BrokerSample> probe) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.probe = probe;
    }

    static Child start(String name, List<String> command, Path work) throws IOException {
        return start(name, command, work, () -> BrokerSample.NONE);
    }

    /**
     * As {@link #start(String, List, Path)}, reading {@code probe} here as each {@code BENCH} line arrives (the
     * broker's CPU time and commands): {@link #probed} gives it by mark.
     */
    static Child start(String name, List<String> command, Path work, Supplier<BrokerSample> probe) throws IOException {
        Path log = work.resolve(name + ".log");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        Child child = new Child(name, process, log, probe);
        Thread reader = new Thread(child::read, "bench-" + name);
        reader.setDaemon(true);
        reader.start();
        return child;
    }

    private void read() {
        try (BufferedReader in =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter out = new PrintWriter(Files.newBufferedWriter(log))) {
            String line;
            while ((line = in.readLine()) != null) {
                out.println(line);
                BrokerSample probedNow = line.startsWith("BENCH ") ? probe.get() : null;
                ThreadTimes.Snapshot threadsNow = probedNow != null && probedNow != BrokerSample.NONE
                        ? ThreadTimes.take(
                                Map.of("broker", ProcessHandle.current().pid(), "consumer", process.pid()))
                        : ThreadTimes.Snapshot.NONE;
                synchronized (this) {
                    if (line.startsWith("BENCH ")) {
                        String[] parts = line.split(" ");
                        probed.put(parts[1], probedNow);
                        threads.put(parts[1], threadsNow);
                        marks.put(
                                parts[1],
                                Arrays.stream(parts, 2, parts.length)
                                        .mapToLong(Long::parseLong)
                                        .toArray());
                    }
                    if (line.startsWith(SettingsInForce.PREFIX)) {
                        settings = line;
                    }
                    tail.addLast(line);
                    if (tail.size() > 20) {
                        tail.removeFirst();
                    }
                    notifyAll();
                }
            }
        } catch (IOException e) {
            // The process is gone; whoever awaits a mark sees that and reports it.
        } finally {
            synchronized (this) {
                ended = true;
                notifyAll();
            }
        }
    }

    /** The numbers of the child's {@code BENCH <mark>} line, waiting for it up to {@code timeout}. */
    synchronized long[] await(String mark, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long left;
        while (!marks.containsKey(mark) && !ended && (left = deadline - System.nanoTime()) > 0) {
            wait(TimeUnit.NANOSECONDS.toMillis(left) + 1);
        }
        long[] values = marks.get(mark);
        if (values == null) {
            throw new IllegalStateException(name + ": no '" + mark + "' within " + timeout
                    + (ended ? " (it exited)" : "") + "; its last lines (all in " + log + "):\n  "
                    + String.join("\n  ", tail));
        }
        return values;
    }

    /** What the probe read as the {@code BENCH <mark>} line arrived, once {@link #await} has returned it. */
    synchronized BrokerSample probed(String mark) {
        return probed.get(mark);
    }

    /**
     * The broker's threads (this JVM's) and the child's, and the machine's CPU, as the {@code BENCH <mark>} line
     * arrived, once {@link #await} has returned it; {@link ThreadTimes.Snapshot#NONE} for a child started without a
     * probe.
     */
    synchronized ThreadTimes.Snapshot threads(String mark) {
        return threads.getOrDefault(mark, ThreadTimes.Snapshot.NONE);
    }

    /** The consumer settings the child has printed so far ({@link SettingsInForce#line}), if any. */
    synchronized java.util.Optional<Map<String, String>> settings() {
        return java.util.Optional.ofNullable(settings).map(SettingsInForce::fromLine);
    }

    /** Writes {@code line} to the child's stdin, for a child that takes commands there. */
    void tell(String line) throws IOException {
        process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
        process.getOutputStream().flush();
    }

    /** Asks the child to stop (SIGTERM: Settle drains and exits 0) and waits for it. */
    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
