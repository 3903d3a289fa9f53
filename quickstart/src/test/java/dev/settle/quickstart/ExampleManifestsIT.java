package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every example manifest in the repository passes {@code settle validate}, handler JAR included. An integration
 * test because it needs the example JAR that this module's build has packaged by then.
 */
// Not on PulsarFixture: settle validate needs no broker.
class ExampleManifestsIT {

    @Test
    void everyExampleManifestValidatesWithItsRealHandlerJar() throws IOException {
        List<Path> manifests;
        try (Stream<Path> files = Files.walk(Path.of("..", "examples"))) {
            manifests = files.filter(file -> file.toString().endsWith(".yaml")
                            && !file.toString().contains("target"))
                    .toList();
        }
        assertThat(manifests).isNotEmpty();
        for (Path manifest : manifests) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exit = Main.execute(
                    List.of("validate", manifest.toString()),
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8));
            assertThat(exit)
                    .as(manifest + ": " + err.toString(StandardCharsets.UTF_8))
                    .isZero();
            assertThat(out.toString(StandardCharsets.UTF_8))
                    .contains("is valid")
                    .contains("maxRedeliverCount: 4");
        }
    }
}
