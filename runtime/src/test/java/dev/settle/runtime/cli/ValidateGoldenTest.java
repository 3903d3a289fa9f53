package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
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
 * {@code <case>.out}, with the warnings of {@code <case>.err} (none when it is absent) on stderr. Handler JARs are
 * real ({@link #resources}). The manifest's folder is cut from the output, so the files hold paths relative to it
 * ({@code cap-on-failover.yaml:7:11: ...}) and read the same on every machine.
 */
class ValidateGoldenTest {
    /** What the environment holds in every golden run; the secrets must never be printed. */
    static final Map<String, String> ENVIRONMENT = Map.of(
            "PULSAR_TOKEN", "tok-SECRET-env-token",
            "API_KEY", "SECRET-api-key-42",
            "REGION", "eu-west-1");

    record Run(int exitCode, String out, String err) {}

    /** The golden folders, copied once with every {@code orders.jar} in them built as a real handler JAR. */
    private static Path copies;

    static Run validate(Path manifest) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exitCode = ValidateCommand.execute(
                List.of(manifest.toString()),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                ENVIRONMENT);
        String folder = manifest.getParent().toString() + "/";
        return new Run(
                exitCode,
                out.toString(StandardCharsets.UTF_8).replace(folder, ""),
                err.toString(StandardCharsets.UTF_8).replace(folder, ""));
    }

    /**
     * A copy of {@code manifest/<folder>} from the test resources, where each {@code orders.jar} (an empty file in
     * the sources) is a real handler JAR, and each {@code functions.jar} a real function JAR: validate loads and
     * constructs handlers, as run does.
     */
    static synchronized Path resources(String folder) {
        try {
            if (copies == null) {
                Path source = Path.of(
                        ValidateGoldenTest.class.getResource("/manifest").toURI());
                Path target = Files.createTempDirectory("settle-golden-");
                try (Stream<Path> files = Files.walk(source)) {
                    for (Path file : files.toList()) {
                        Path copy = target.resolve(source.relativize(file).toString());
                        if (Files.isDirectory(file)) {
                            Files.createDirectories(copy);
                        } else if (file.getFileName().toString().equals("orders.jar")) {
                            TestJar.orderHandler(copy);
                        } else if (file.getFileName().toString().equals("bulk.jar")) {
                            TestJar.bulkHandler(copy);
                        } else if (file.getFileName().toString().equals("functions.jar")) {
                            TestJar.functions(copy);
                        } else if (file.getFileName().toString().equals("counting.jar")) {
                            TestJar.countingFunction(copy);
                        } else if (file.getFileName().toString().equals("serde.jar")) {
                            TestJar.serdeFunction(copy);
                        } else if (file.getFileName().toString().equals("starter.jar")) {
                            TestJar.starterFunctions(copy);
                        } else if (file.getFileName().toString().equals("bundling.jar")) {
                            TestJar.functionBundlingTheApi(copy);
                        } else {
                            Files.copy(file, copy);
                        }
                    }
                }
                copies = target;
            }
            return copies.resolve(folder);
        } catch (URISyntaxException | IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<Path> manifests(String folder) throws IOException {
        try (Stream<Path> files = Files.list(resources(folder))) {
            return files.filter(file -> file.toString().endsWith(".yaml"))
                    .sorted()
                    .toList();
        }
    }

    private static Path sibling(Path manifest, String extension) {
        String name = manifest.getFileName().toString();
        return manifest.resolveSibling(name.substring(0, name.length() - ".yaml".length()) + extension);
    }

    @TestFactory
    Stream<DynamicTest> everyInvalidManifestIsRefusedWithItsExpectedProblems() throws IOException {
        return manifests("invalid").stream()
                .map(manifest -> DynamicTest.dynamicTest(manifest.getFileName().toString(), () -> {
                    Run run = validate(manifest);
                    rewriteIfAsked(manifest, ".expected", run.err());
                    assertThat(run.exitCode()).isEqualTo(Main.INVALID);
                    assertThat(run.out()).isEmpty();
                    assertThat(run.err().lines())
                            .containsExactlyElementsOf(Files.readAllLines(sibling(manifest, ".expected")));
                }));
    }

    @TestFactory
    Stream<DynamicTest> everyValidManifestPrintsItsEffectiveSettings() throws IOException {
        return manifests("valid").stream()
                .map(manifest -> DynamicTest.dynamicTest(manifest.getFileName().toString(), () -> {
                    Run run = validate(manifest);
                    rewriteIfAsked(manifest, ".out", run.out());
                    rewriteIfAsked(manifest, ".err", run.err());
                    Path warnings = sibling(manifest, ".err");
                    assertThat(run.err().lines())
                            .containsExactlyElementsOf(
                                    Files.exists(warnings) ? Files.readAllLines(warnings) : List.of());
                    assertThat(run.exitCode()).isZero();
                    assertThat(run.out().lines())
                            .containsExactlyElementsOf(Files.readAllLines(sibling(manifest, ".out")));
                }));
    }

    /**
     * With {@code -Dsettle.golden.rewrite=<path of src/test/resources/manifest>}, writes what was printed over the
     * golden file in the sources, to review with {@code git diff}; the run still fails where they differed.
     */
    private static void rewriteIfAsked(Path manifest, String extension, String printed) throws IOException {
        String sources = System.getProperty("settle.golden.rewrite");
        if (sources == null) {
            return;
        }
        Path golden = Path.of(sources)
                .resolve(resources("").relativize(sibling(manifest, extension)).toString());
        if (printed.isEmpty()) {
            Files.deleteIfExists(golden);
        } else {
            Files.writeString(golden, printed);
        }
    }

    @Test
    void thereIsAGoldenFileForAtLeastThirtyRefusals() throws IOException {
        List<Path> invalid = manifests("invalid");
        assertThat(invalid).hasSizeGreaterThanOrEqualTo(30);
        assertThat(invalid)
                .allSatisfy(
                        manifest -> assertThat(sibling(manifest, ".expected")).exists());
        assertThat(manifests("valid"))
                .allSatisfy(manifest -> assertThat(sibling(manifest, ".out")).exists());
    }
}
