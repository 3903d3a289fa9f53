package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.Waits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import sun.misc.Signal;

/**
 * {@code settle dev}'s terminal holds its own lines only: what the broker's libraries print by themselves (a stack
 * trace on standard error, a line on standard output, a java.util.logging warning) goes to the broker's log, at start
 * and while stopping; and its data folder and log are its owner's only. A broker of this test's own stands in for the
 * real one: it prints that noise on purpose.
 */
class DevCommandQuietTest {
    static final String NOISY_BROKER = """
            package dev.settle.testbroker;

            public final class EmbeddedPulsar implements AutoCloseable {
                public static EmbeddedPulsar startDurable(
                        java.nio.file.Path data, String address, int port, int httpPort, int bookiePort) {
                    System.out.println("noisy broker: a line on standard output at start");
                    java.util.logging.Logger.getLogger("noisy.broker").warning("noisy broker: a JUL warning");
                    return new EmbeddedPulsar();
                }

                @Override
                public void close() {
                    new IllegalStateException("noisy broker: AlreadyClosedException while stopping")
                            .printStackTrace();
                }
            }
            """;

    @Test
    void theBrokersOwnPrintsGoToItsLogAndTheTerminalHoldsOnlySettleDevsLines(@TempDir Path folder) throws Exception {
        Path data = folder.resolve("data");

        String printed = runDevUntilReadyThenCtrlC(folder, data);

        assertThat(printed)
                .contains(DevCommand.READY, "settle dev: stopping Pulsar", "settle dev: stopped")
                .doesNotContain("noisy broker", "Exception", "\tat ");
        assertThat(Files.readString(data.resolve("broker.log")))
                .contains(
                        "noisy broker: a line on standard output at start",
                        "noisy broker: AlreadyClosedException while stopping");
    }

    /** The data folder holds every message produced to the dev broker, and its log: only its owner may read them. */
    @Test
    void theDataFolderIsOwnerOnlyAndSoIsTheBrokersLog(@TempDir Path folder) throws Exception {
        Path data = folder.resolve("data");
        // An existing folder, open to all, as an earlier settle dev left it (0755, its log 0644).
        Files.createDirectories(data);
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(
                Files.writeString(data.resolve("broker.log"), "an earlier run\n"),
                PosixFilePermissions.fromString("rw-r--r--"));

        runDevUntilReadyThenCtrlC(folder, data);

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data)))
                .isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve("broker.log"))))
                .isEqualTo("rw-------");
    }

    /** Runs {@code settle dev} on the noisy broker as Main.main would, until ready, then SIGTERM (as Ctrl-C); what the terminal got. */
    private static String runDevUntilReadyThenCtrlC(Path folder, Path data) throws Exception {
        Path broker = unpacked(
                TestJar.at(folder.resolve("noisy-broker.jar"))
                        .source("dev.settle.testbroker.EmbeddedPulsar", NOISY_BROKER)
                        .build(),
                folder.resolve("broker-classes"));
        ByteArrayOutputStream terminal = new ByteArrayOutputStream();
        PrintStream terminalStream = new PrintStream(terminal, true, StandardCharsets.UTF_8);
        PrintStream savedOut = System.out;
        PrintStream savedErr = System.err;
        String savedBroker = System.getProperty(DevCommand.BROKER_PROPERTY);
        String savedLogFile = System.getProperty("settle.pulsar.logFile");
        // As Main.main runs it: the command's writers are bound to the process's streams of the moment.
        System.setOut(terminalStream);
        System.setErr(terminalStream);
        System.setProperty(DevCommand.BROKER_PROPERTY, broker.toString());
        try {
            CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> Main.execute(
                    List.of("dev", "--port", "0", "--http-port", "0", "--bookie-port", "0", "--data", data.toString()),
                    System.out,
                    System.err,
                    Map.of()));
            Waits.until(
                    "settle dev ready (or ended)",
                    Duration.ofSeconds(60),
                    () -> terminal.toString(StandardCharsets.UTF_8),
                    text -> text.contains(DevCommand.READY) || exit.isDone());
            assertThat(exit).as(terminal.toString(StandardCharsets.UTF_8)).isNotDone();
            // SIGTERM, which stops it the same way as Ctrl-C: a build started as a background job has SIGINT
            // ignored, and then no JVM can handle it (settle dev says so; both tests timed out that way).
            Signal.raise(new Signal("TERM"));
            assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
        } finally {
            System.setOut(savedOut);
            System.setErr(savedErr);
            restore(DevCommand.BROKER_PROPERTY, savedBroker);
            restore("settle.pulsar.logFile", savedLogFile);
        }
        return terminal.toString(StandardCharsets.UTF_8);
    }

    static Path unpacked(Path jar, Path classes) throws IOException {
        try (InputStream in = Files.newInputStream(jar);
                ZipInputStream zip = new ZipInputStream(in)) {
            for (ZipEntry entry; (entry = zip.getNextEntry()) != null; ) {
                Path file = classes.resolve(entry.getName()).normalize();
                if (entry.isDirectory()) {
                    Files.createDirectories(file);
                } else {
                    Files.createDirectories(file.getParent());
                    Files.copy(zip, file);
                }
            }
        }
        return classes;
    }

    private static void restore(String property, String value) {
        if (value == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, value);
        }
    }
}
