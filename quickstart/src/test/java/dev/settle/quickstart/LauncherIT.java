package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

// Not on PulsarFixture: it needs no broker (the launchers' JVM flags, read from commands that answer without one).
/**
 * The clone's {@code ./settle} and the distribution's {@code bin/settle} start a command that answers and exits with
 * the first JIT tier alone and the serial collector (a produce of one message: 2.0 s of CPU to 1.2 s,
 * docs/benchmarks.md), and {@code run}, which serves for hours, with the JVM's defaults.
 */
class LauncherIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private static String flags(Path launcher, String... arguments) throws Exception {
        return output(launcher, "-XX:+PrintCommandLineFlags", arguments);
    }

    private static String output(Path launcher, String javaOptions, String... arguments) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("sh", launcher.toString()));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        // With -XX:+PrintCommandLineFlags, the JVM prints the flags it was started with on its first line.
        builder.environment().put("JAVA_OPTS", javaOptions);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    @Test
    void aCommandThatAnswersAndTheDevBrokerStartWithTheFirstJitTierAndRunWithTheDefaults() throws Exception {
        // The distribution's bin/settle has the same lines; it needs lib/ beside it, which DistributionIT unpacks.
        Path launcher = ROOT.resolve("settle");
        assertThat(flags(launcher, "--version")).contains("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "settle ");
        assertThat(flags(launcher, "produce", "--help")).contains("-XX:TieredStopAtLevel=1", "Usage: settle produce");
        assertThat(flags(launcher, "run", "--help"))
                .doesNotContain("TieredStopAtLevel")
                .contains("Usage: settle run");
        // The dev broker too (its own line of the launcher, with the broker's JVM options): half the CPU to ready.
        assertThat(flags(launcher, "dev", "--help")).contains("-XX:TieredStopAtLevel=1", "Usage: settle dev");
    }

    /**
     * A command's first run writes the classes it loaded to a class-data archive of its own as it exits; its next run
     * maps it. Neither prints a word of it: what the command prints is the same.
     */
    @Test
    void aCommandsFirstRunWritesItsClassDataArchiveAndTheNextMapsIt() throws Exception {
        Path launcher = ROOT.resolve("settle");
        Path archives = ROOT.resolve("runtime/target/cds");
        // Built first if needed (the build removes the archives), then this command's archive removed.
        output(launcher, "", "--version");
        try (var written = Files.list(archives)) {
            for (Path archive : written.filter(
                            file -> file.getFileName().toString().startsWith("version.jsa"))
                    .toList()) {
                Files.delete(archive);
            }
        }

        String first = flags(launcher, "--version");
        String second = flags(launcher, "--version");

        assertThat(first).contains("-XX:ArchiveClassesAtExit=" + archives.resolve("version.jsa."));
        assertThat(second).contains("-XX:SharedArchiveFile=" + archives.resolve("version.jsa"));
        assertThat(archives.resolve("version.jsa")).isNotEmptyFile();
        assertThat(withoutFlags(second)).isEqualTo(withoutFlags(first)).startsWith("settle ");
        assertThat(output(launcher, "", "--version")).isEqualTo(withoutFlags(first));
    }

    /** The output without its first line, the flags the JVM printed. */
    private static String withoutFlags(String output) {
        return output.substring(output.indexOf('\n') + 1);
    }
}
