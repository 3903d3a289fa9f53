package dev.settle.testbroker;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A child process's output (stdout and stderr together), collected line by line by a daemon thread of its own and
 * echoed on ours with a label: what {@link SettleProcess} and {@link LocalRunnerProcess} read.
 */
final class ProcessOutput {
    final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    ProcessOutput(Process process, String label) {
        reader = new Thread(
                () -> {
                    try (BufferedReader in = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line = in.readLine(); line != null; line = in.readLine()) {
                            lines.add(line);
                            System.out.println("[" + label + "] " + line);
                        }
                    } catch (IOException e) {
                        // The process is gone.
                    }
                },
                label + "-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Waits up to {@code millis} for the last line, once the process has exited. */
    void awaitEnd(long millis) throws InterruptedException {
        reader.join(millis);
    }
}
