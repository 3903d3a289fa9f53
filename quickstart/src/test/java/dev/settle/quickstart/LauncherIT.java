package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The clone's {@code ./settle} and the distribution's {@code bin/settle} start a command that answers and exits with
 * the first JIT tier alone and the serial collector (a produce of one message: 2.0 s of CPU to 1.2 s,
 * docs/benchmarks.md), and {@code run}, which serves for hours, with the JVM's defaults.
 */
class LauncherIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private static String flags(Path launcher, String... arguments) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("sh", launcher.toString()));
        command.addAll(List.of(arguments));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        // The JVM prints the flags it was started with on its first line.
        builder.environment().put("JAVA_OPTS", "-XX:+PrintCommandLineFlags");
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    @Test
    void aCommandThatAnswersStartsWithTheFirstJitTierAndRunWithTheDefaults() throws Exception {
        // The distribution's bin/settle has the same lines; it needs lib/ beside it, which DistributionIT unpacks.
        Path launcher = ROOT.resolve("settle");
        assertThat(flags(launcher, "--version")).contains("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "settle ");
        assertThat(flags(launcher, "produce", "--help")).contains("-XX:TieredStopAtLevel=1", "Usage: settle produce");
        assertThat(flags(launcher, "run", "--help"))
                .doesNotContain("TieredStopAtLevel")
                .contains("Usage: settle run");
    }
}
