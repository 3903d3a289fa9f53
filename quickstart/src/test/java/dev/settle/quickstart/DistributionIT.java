package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The distribution the build makes, {@code runtime/target/settle-<version>.tar.gz}, unpacked as a user would:
 * {@code bin/settle} runs the CLI from anywhere, and {@code settle dev}, whose broker only a clone has, says so.
 */
// Not on PulsarFixture: it runs the unpacked distribution as a user would, with no broker of the tests.
class DistributionIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    record Run(int exit, String output) {}

    private static Run run(Path folder, String... command) throws Exception {
        Path output = Files.createTempFile(Path.of("target"), "distribution-", ".txt");
        Process process = new ProcessBuilder(command)
                .directory(folder.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
        return new Run(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }

    @Test
    void theUnpackedDistributionRunsSettleAndSendsSettleDevToAClone() throws Exception {
        Path tarball;
        try (var files = Files.list(ROOT.resolve("runtime/target"))) {
            tarball = files.filter(p -> p.getFileName().toString().matches("settle-.*\\.tar\\.gz"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no settle-<version>.tar.gz in runtime/target"));
        }
        Path unpacked =
                Files.createDirectories(Path.of("target", "distribution").toAbsolutePath());
        assertThat(run(unpacked, "tar", "xzf", tarball.toString()).exit()).isZero();
        String version = tarball.getFileName().toString().replace(".tar.gz", "");
        Path settle = unpacked.resolve(version).resolve("bin/settle");
        assertThat(Files.isExecutable(settle)).isTrue();
        assertThat(unpacked.resolve(version).resolve("lib/settle-runtime.jar")).exists();

        // From another folder, as from the PATH.
        Run versionRun = run(unpacked, settle.toString(), "--version");
        assertThat(versionRun.exit()).as(versionRun.output()).isZero();
        assertThat(versionRun.output()).startsWith(version.replace("settle-", "settle ") + "\n");

        // The class-data archive goes to the user's cache (lib/ may be read-only), one folder per JAR: written by a
        // command's first run, mapped by its next, and not a word printed of it.
        Path cache = unpacked.resolve("cache");
        Run first = run(unpacked, "env", "XDG_CACHE_HOME=" + cache, settle.toString(), "--version");
        Run second = run(unpacked, "env", "XDG_CACHE_HOME=" + cache, settle.toString(), "--version");
        assertThat(second).isEqualTo(first).isEqualTo(versionRun);
        try (var archives = Files.walk(cache.resolve("settle/cds"))) {
            assertThat(archives.map(Path::getFileName).map(Path::toString)).containsOnlyOnce("version.jsa");
        }

        Run dev = run(unpacked, settle.toString(), "dev");
        assertThat(dev.exit()).isEqualTo(1);
        assertThat(dev.output()).contains("comes with a clone of the Settle repository");
    }
}
