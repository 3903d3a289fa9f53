package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.isolation.TestLoaders;
import dev.settle.runtime.manifest.ManifestException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code settle validate} opens the handler JAR, as {@code run} will, and says what it found. */
class ValidateLoadsHandlersTest {
    @TempDir
    Path folder;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private void jar(String name, String type, String extra) {
        TestJar jar = TestJar.at(folder.resolve(name + ".jar"))
                .source("test." + name, """
                        package test;
                        import dev.settle.sdk.*;
                        public class %s implements Handler<%s> {
                            @Override public Outcome handle(Delivery<%s> delivery) { return Outcome.ack(); }
                        }
                        """.formatted(name, type, type))
                .services("test." + name)
                .implementationVersion("1.2.3");
        if (extra != null) {
            jar.source("test.Order", extra);
        }
        jar.build();
    }

    private Path manifest(String subscription) throws IOException {
        Path manifest = folder.resolve("settle.yaml");
        Files.writeString(manifest, """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                subscriptions:
                %s""".formatted(subscription));
        return manifest;
    }

    private int validate(Path manifest) {
        return ValidateCommand.execute(
                List.of(manifest.toString()),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void validatePrintsTheHandlerFoundAndTheSchemaItsTypeGets() throws IOException {
        jar("Greeter", "String", null);
        jar("Orders", "Order", "package test; public record Order(String id) {}");
        Path manifest = manifest("""
                  - name: greetings
                    topics: [greetings]
                    jar: Greeter.jar
                  - name: orders
                    topics: [orders]
                    jar: Orders.jar
                    handler: test.Orders
                """);

        assertThat(validate(manifest)).as(err.toString(StandardCharsets.UTF_8)).isZero();

        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("  handler: test.Greeter 1.2.3\n")
                .contains("  schema: none registered, payloads read as UTF-8 (the handler takes java.lang.String)\n")
                .contains("  handler: test.Orders 1.2.3\n")
                .contains("  schema: json (the handler takes test.Order)\n");
    }

    @Test
    void aHandlerTheJarDoesNotDeclareIsRefusedAtTheManifestsHandlerLine() throws IOException {
        jar("Greeter", "String", null);
        Path manifest = manifest("""
                  - name: greetings
                    topics: [greetings]
                    jar: Greeter.jar
                    handler: test.Missing
                """);

        assertThat(validate(manifest)).isEqualTo(Main.INVALID);

        assertThat(err.toString(StandardCharsets.UTF_8))
                .isEqualTo(manifest + ":7:14: subscriptions[0].handler: "
                        + folder.resolve("Greeter.jar")
                        + " does not declare handler test.Missing; it declares test.Greeter."
                        + " Name one of those, or add test.Missing to META-INF/services/dev.settle.sdk.Handler\n");
    }

    @Test
    void aSchemaTheHandlersTypeCannotTakeIsRefusedAtTheSchemaLine() throws IOException {
        jar("Greeter", "String", null);
        jar("Orders", "Order", "package test; public record Order(String id) {}");
        Path manifest = manifest("""
                  - name: greetings
                    topics: [greetings]
                    jar: Greeter.jar
                    schema: bytes
                  - name: orders
                    topics: [orders]
                    jar: Orders.jar
                    schema: string
                  - name: audit
                    topics: [audit]
                    jar: Orders.jar
                    schema: avro
                """);

        assertThat(validate(manifest)).isEqualTo(Main.INVALID);

        assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .isEqualTo(manifest
                        + ":7:13: subscriptions[0].schema: 'bytes' does not fit handler test.Greeter, which takes"
                        + " java.lang.String; the schemas that fit are string, or leave schema out to take the"
                        + " handler's\n"
                        + manifest
                        + ":11:13: subscriptions[1].schema: 'string' does not fit handler test.Orders, which takes"
                        + " test.Order; the schemas that fit are json, avro, or leave schema out to take the"
                        + " handler's\n");
    }

    @Test
    void aHandlerStuckInItsStaticInitialiserIsRefusedByValidateAtTheDeadline() throws IOException {
        TestJar.at(folder.resolve("Stuck.jar"))
                .source("test.Stuck", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Stuck implements Handler<String> {
                            static { while (!Boolean.getBoolean("never.set")) { Thread.onSpinWait(); } }
                            @Override public Outcome handle(Delivery<String> delivery) { return Outcome.ack(); }
                        }
                        """)
                .services("test.Stuck")
                .build();
        Path manifest = manifest("""
                  - name: stuck
                    topics: [stuck]
                    jar: Stuck.jar
                """);

        assertThatThrownBy(
                        () -> Preflight.check(manifest, Map.of(), TestLoaders.withLoadDeadline(Duration.ofMillis(500))))
                .isInstanceOf(ManifestException.class)
                .hasMessage(manifest + ":6:10: subscriptions[0].jar: "
                        + folder.resolve("Stuck.jar")
                        + ": handler test.Stuck did not finish running its static initialiser"
                        + " within 500ms; it may wait for a lock, the network or input that never comes. Keep its static"
                        + " initialiser and constructor quick, and connect to what it needs in open()");
    }
}
