package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Golden files for {@code settle validate}: every {@code manifest/invalid/<case>.yaml} is refused with exactly
 * the lines of {@code <case>.expected} on stderr, and every {@code manifest/valid/<case>.yaml} prints exactly
 * {@code <case>.out}. The manifest's folder is cut from the output, so the files hold paths relative to it
 * ({@code cap-on-failover.yaml:7:11: ...}) and read the same on every machine.
 */
class ValidateGoldenTest {
    /** What the environment holds in every golden run; the secrets must never be printed. */
    static final Map<String, String> ENVIRONMENT = Map.of(
            "PULSAR_TOKEN", "tok-SECRET-env-token",
            "API_KEY", "SECRET-api-key-42",
            "REGION", "eu-west-1");

    record Run(int exitCode, String out, String err) {}

    static Run validate(Path manifest) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exitCode = ValidateCommand.execute(List.of(manifest.toString()),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                HandlerCheck.NONE, ENVIRONMENT);
        String folder = manifest.getParent().toString() + "/";
        return new Run(exitCode, out.toString(StandardCharsets.UTF_8).replace(folder, ""),
                err.toString(StandardCharsets.UTF_8).replace(folder, ""));
    }

    static Path resources(String folder) {
        try {
            return Path.of(ValidateGoldenTest.class.getResource("/manifest/" + folder).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<Path> manifests(String folder) throws IOException {
        try (Stream<Path> files = Files.list(resources(folder))) {
            return files.filter(file -> file.toString().endsWith(".yaml")).sorted().toList();
        }
    }

    private static Path sibling(Path manifest, String extension) {
        String name = manifest.getFileName().toString();
        return manifest.resolveSibling(name.substring(0, name.length() - ".yaml".length()) + extension);
    }

    @TestFactory
    Stream<DynamicTest> everyInvalidManifestIsRefusedWithItsExpectedProblems() throws IOException {
        return manifests("invalid").stream().map(manifest -> DynamicTest.dynamicTest(
                manifest.getFileName().toString(), () -> {
                    Run run = validate(manifest);
                    assertThat(run.exitCode()).isEqualTo(Main.INVALID);
                    assertThat(run.out()).isEmpty();
                    assertThat(run.err().lines())
                            .containsExactlyElementsOf(Files.readAllLines(sibling(manifest, ".expected")));
                }));
    }

    @TestFactory
    Stream<DynamicTest> everyValidManifestPrintsItsEffectiveSettings() throws IOException {
        return manifests("valid").stream().map(manifest -> DynamicTest.dynamicTest(
                manifest.getFileName().toString(), () -> {
                    Run run = validate(manifest);
                    assertThat(run.err()).isEmpty();
                    assertThat(run.exitCode()).isZero();
                    assertThat(run.out().lines()).containsExactlyElementsOf(Files.readAllLines(sibling(manifest, ".out")));
                }));
    }

    @Test
    void thereIsAGoldenFileForAtLeastThirtyRefusals() throws IOException {
        List<Path> invalid = manifests("invalid");
        assertThat(invalid).hasSizeGreaterThanOrEqualTo(30);
        assertThat(invalid).allSatisfy(manifest -> assertThat(sibling(manifest, ".expected")).exists());
        assertThat(manifests("valid")).allSatisfy(manifest -> assertThat(sibling(manifest, ".out")).exists());
    }
}
