package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.Waits;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code settle dev} says when Ctrl-C cannot stop it: a process started with SIGINT ignored (a shell's background job,
 * {@code nohup}) keeps it ignored, the JVM installs no handler, and Ctrl-C did nothing without a word. Each case runs
 * {@code settle dev} in a process of its own (a JVM's signal disposition is fixed at its start), on the quiet test's
 * stand-in broker, and stops it with SIGTERM.
 */
class DevCommandCtrlCTest {
    private static final String IGNORED = "settle dev: Ctrl-C is ignored in this process";

    @Test
    void startedWithCtrlCIgnoredItSaysSoAndHowToStopIt(@TempDir Path folder) throws Exception {
        // sh's `trap '' INT` then exec: the JVM starts with SIGINT ignored, as a background job's does.
        List<String> printed = devUntilReady(folder, List.of("sh", "-c", "trap '' INT; exec \"$@\"", "sh"));

        assertThat(printed)
                .anySatisfy(line ->
                        assertThat(line).startsWith(IGNORED).containsPattern("stop it with kill \\d+ \\(SIGTERM\\)"));
    }

    @Test
    void startedWithCtrlCAtItsDefaultItSaysNothingOfIt(@TempDir Path folder) throws Exception {
        // Reset, whatever this build was started with: a build run as a background job has SIGINT ignored too.
        List<String> printed = devUntilReady(folder, List.of("env", "--default-signal=INT"));

        assertThat(printed).noneMatch(line -> line.contains(IGNORED));
    }

    /** {@code settle dev} started through {@code launcher}, until ready; what it printed. Stopped with SIGTERM. */
    private static List<String> devUntilReady(Path folder, List<String> launcher) throws Exception {
        Path broker = DevCommandQuietTest.unpacked(
                TestJar.at(folder.resolve("noisy-broker.jar"))
                        .source("dev.settle.testbroker.EmbeddedPulsar", DevCommandQuietTest.NOISY_BROKER)
                        .build(),
                folder.resolve("broker-classes"));
        List<String> command = new ArrayList<>(launcher);
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                "-D" + DevCommand.BROKER_PROPERTY + "=" + broker,
                Main.class.getName(),
                "dev",
                "--port",
                "0",
                "--http-port",
                "0",
                "--bookie-port",
                "0",
                "--data",
                folder.resolve("data").toString()));
        Process dev = new ProcessBuilder(command).redirectErrorStream(true).start();
        List<String> printed = new ArrayList<>();
        Thread reading = new Thread(() -> {
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(dev.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    synchronized (printed) {
                        printed.add(line);
                    }
                }
            } catch (java.io.IOException closed) {
                // The process ended.
            }
        });
        reading.start();
        try {
            Waits.until(
                    "settle dev ready (or ended)",
                    Duration.ofSeconds(60),
                    () -> {
                        synchronized (printed) {
                            return List.copyOf(printed);
                        }
                    },
                    lines -> !dev.isAlive() || lines.stream().anyMatch(line -> line.startsWith(DevCommand.READY)));
            assertThat(dev.isAlive()).as("settle dev still runs: %s", printed).isTrue();
        } finally {
            dev.destroy();
            assertThat(dev.waitFor(60, TimeUnit.SECONDS))
                    .as("settle dev stops on SIGTERM")
                    .isTrue();
            reading.join(10_000);
        }
        assertThat(dev.exitValue()).as("%s", printed).isZero();
        synchronized (printed) {
            return List.copyOf(printed);
        }
    }
}
