package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code settle --help} (like every command but {@code run}) never loads the HTTP server: Jetty's classes are loaded
 * only when {@code settle run} serves a port (issue 40), so the other commands start no slower for it. In a child
 * JVM, because this one's tests may have loaded it already.
 */
class HelpLoadsNoServerTest {
    @Test
    void helpLoadsNeitherJettyNorTheHttpPackage() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(List.of(
                        java.toString(),
                        "-verbose:class",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Main.class.getName(),
                        "--help"))
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(child.exitValue()).as(output).isZero();
        assertThat(output)
                .as("the class-load lines of settle --help")
                .contains("[class,load] " + Main.class.getName() + " ")
                .contains("Usage: settle")
                .doesNotContain("org.eclipse.jetty.", "dev.settle.runtime.http.");
    }
}
