package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A handler that calls {@code System.exit} while Settle loads it ends {@code validate} with its own exit code;
 * stderr must still say which handler did it. Runs {@code validate} in a child JVM, as the exit would end this one.
 */
class HandlerExitTest {
    @TempDir
    Path folder;

    record Child(int exitCode, String err) {}

    private Child validate(String handlerBody) throws IOException, InterruptedException {
        TestJar.at(folder.resolve("Quitter.jar"))
                .source("test.Quitter", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Quitter implements Handler<String> {
                            %s
                            @Override public Outcome handle(Delivery<String> delivery) { return Outcome.ack(); }
                        }
                        """.formatted(handlerBody))
                .services("test.Quitter")
                .build();
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                subscriptions:
                  - name: quits
                    topics: [quits]
                    jar: Quitter.jar
                """);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(
                        java.toString(),
                        "-Xmx64m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Main.class.getName(),
                        "validate",
                        manifest.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(folder.resolve("stderr.txt").toFile())
                .start();
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).as("validate ended").isTrue();
        return new Child(child.exitValue(), Files.readString(folder.resolve("stderr.txt"), StandardCharsets.UTF_8));
    }

    @Test
    void aConstructorCallingSystemExitIsNamedOnStderr() throws Exception {
        Child child = validate("public Quitter() { System.exit(3); }");

        assertThat(child.exitCode()).isEqualTo(3);
        assertThat(child.err())
                .contains("settle: handler class test.Quitter (" + folder.resolve("Quitter.jar")
                        + ") called System.exit while Settle was constructing it; a handler must not end the JVM: throw an"
                        + " exception from its constructor or static initialiser instead, and Settle reports it\n");
    }

    @Test
    void aStaticInitialiserCallingSystemExitIsNamedOnStderr() throws Exception {
        Child child = validate("static { if (Boolean.parseBoolean(\"true\")) { System.exit(4); } }");

        assertThat(child.exitCode()).isEqualTo(4);
        assertThat(child.err())
                .contains("settle: handler class test.Quitter (" + folder.resolve("Quitter.jar")
                        + ") called System.exit while Settle was running its static initialiser;");
    }
}
