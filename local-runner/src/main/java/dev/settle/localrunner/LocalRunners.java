package dev.settle.localrunner;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.pulsar.functions.LocalRunner;
import picocli.CommandLine;

/**
 * Several functions under Pulsar Functions' LocalRunner in one JVM, for a test that compares many functions with
 * Settle: each LocalRunner JVM spends 4-5 s of CPU starting, and the functions themselves next to nothing. The
 * arguments are groups separated by {@code --next}, each what {@code org.apache.pulsar.functions.LocalRunner}'s own
 * main takes, parsed as it parses them (picocli) into a LocalRunner of its own, which then starts as its main starts
 * it (thread mode: its function, client and shutdown hook are its own). SIGTERM stops them all, each by its hook.
 */
public final class LocalRunners {
    static final String NEXT = "--next";

    private LocalRunners() {}

    public static void main(String[] args) throws Exception {
        List<LocalRunner> started = new ArrayList<>();
        try {
            for (List<String> group : groups(args)) {
                LocalRunner runner = LocalRunner.builder().build();
                new CommandLine(runner).setCommandName("LocalRunner").parseArgs(group.toArray(String[]::new));
                // On a thread of its own: LocalRunner's start may leave the function's class loader as its thread's
                // context class loader, which the next one must not inherit.
                Exception[] failed = new Exception[1];
                Thread starting = new Thread(
                        () -> {
                            try {
                                runner.start(false);
                            } catch (Exception e) {
                                failed[0] = e;
                            }
                        },
                        "local-runner-start");
                starting.start();
                starting.join();
                if (failed[0] != null) {
                    throw failed[0];
                }
                started.add(runner);
            }
        } catch (Exception e) {
            for (LocalRunner runner : started) {
                runner.close();
            }
            throw e;
        }
        // Until SIGTERM, whose shutdown hooks (one per LocalRunner) close the functions and their clients.
        Thread.currentThread().join();
    }

    static List<List<String>> groups(String[] args) {
        List<List<String>> groups = new ArrayList<>();
        int from = 0;
        for (int i = 0; i <= args.length; i++) {
            if (i == args.length || args[i].equals(NEXT)) {
                if (i == from) {
                    throw new IllegalArgumentException(
                            "an empty group of LocalRunner arguments at " + i + " in " + Arrays.toString(args));
                }
                groups.add(List.of(args).subList(from, i));
                from = i + 1;
            }
        }
        return groups;
    }
}
