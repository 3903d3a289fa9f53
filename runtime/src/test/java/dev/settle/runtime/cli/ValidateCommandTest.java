package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class ValidateCommandTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int validate(List<String> args) {
        return ValidateCommand.execute(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                ValidateGoldenTest.ENVIRONMENT);
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void aMissingManifestIsRefusedWithAClearMessage(@TempDir Path folder) {
        Path missing = folder.resolve("nowhere.yaml");

        assertThat(validate(List.of(missing.toString()))).isEqualTo(Main.INVALID);
        assertThat(err()).isEqualTo("settle: cannot read manifest '" + missing + "': no such file\n");
    }

    @Test
    void aFolderGivenAsTheManifestIsRefused(@TempDir Path folder) {
        assertThat(validate(List.of(folder.toString()))).isEqualTo(Main.INVALID);
        assertThat(err()).contains("cannot read manifest").contains("is a folder");
    }

    @Test
    void withSkipJarCheckAPackageIsNotFetchedAndSaysSo(@TempDir Path folder) throws IOException {
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                  adminUrl: http://localhost:1
                subscriptions:
                  - name: orders
                    topics: [persistent://public/default/orders]
                    jar: function://public/default/orders-handler@1.2.0
                """);

        assertThat(validate(List.of("--skip-jar-check", manifest.toString())))
                .as(err())
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("  jar: function://public/default/orders-handler@1.2.0 (a Pulsar package; NOT CHECKED:"
                        + " not fetched)");
    }

    @Test
    void withoutSkipJarCheckAPackageThatCannotBeFetchedIsRefusedOnItsLine(@TempDir Path folder) throws IOException {
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                  adminUrl: http://127.0.0.1:1
                  packageCache: cache
                subscriptions:
                  - name: orders
                    topics: [persistent://public/default/orders]
                    jar: function://public/default/orders-handler@1.2.0
                """);

        assertThat(validate(List.of(manifest.toString()))).isEqualTo(Main.INVALID);
        assertThat(err())
                .contains("settle.yaml:8:10: subscriptions[0].jar: cannot fetch package"
                        + " function://public/default/orders-handler@1.2.0 from http://127.0.0.1:1")
                .contains("check pulsar.adminUrl and that the broker is up");
    }

    @Test
    void validateWithoutExactlyOneManifestIsAUsageError() {
        assertThat(validate(List.of())).isEqualTo(Main.USAGE);
        assertThat(validate(List.of("a.yaml", "b.yaml"))).isEqualTo(Main.USAGE);
    }

    @Test
    void aManifestWithFiveIndependentMistakesReportsAllFive() {
        Path manifest = ValidateGoldenTest.resources("invalid").resolve("five-independent-mistakes.yaml");

        assertThat(validate(List.of(manifest.toString()))).isEqualTo(Main.INVALID);
        assertThat(err().lines())
                .hasSize(5)
                .anySatisfy(line -> assertThat(line).contains("http.port"))
                .anySatisfy(line -> assertThat(line).contains("subscriptions[0].type"))
                .anySatisfy(line -> assertThat(line).contains("subscriptions[0].ackTimeout"))
                .anySatisfy(line -> assertThat(line).contains("subscriptions[1].jar"))
                .anySatisfy(line -> assertThat(line).contains("subscriptions[1].concurency"));
    }

    @Test
    void handlersAreNotLoadedForAManifestThatIsAlreadyRefused(@TempDir Path folder) throws IOException {
        Files.writeString(folder.resolve("broken.jar"), "not a jar");
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                subscriptions:
                  - name: orders
                    topics: [orders]
                    type: Failover
                    maxAttempts: 3
                    deadLetterTopic: orders-dlq
                    jar: broken.jar
                """);

        assertThat(validate(List.of(manifest.toString()))).isEqualTo(Main.INVALID);
        assertThat(err().lines())
                .hasSize(1)
                .allSatisfy(line ->
                        assertThat(line).contains("subscriptions[0].type").doesNotContain("broken.jar"));
    }

    @Test
    void secretsAreNeverPrintedWhetherTheManifestIsValidOrNot() throws IOException {
        List<Path> manifests = new ArrayList<>(ValidateGoldenTest.manifests("valid"));
        manifests.addAll(ValidateGoldenTest.manifests("invalid"));
        for (Path manifest : manifests) {
            validate(List.of(manifest.toString()));
        }
        String printed = out.toString(StandardCharsets.UTF_8) + err();

        assertThat(printed)
                .contains("[REDACTED]")
                .doesNotContain("tok-SECRET-env-token")
                .doesNotContain("SECRET-api-key-42")
                .doesNotContain("file-SECRET-token-value")
                .doesNotContain("INLINE-SECRET-TOKEN");
    }

    @Test
    void aDataUrlOfOAuth2CredentialsIsNeverPrinted(@TempDir Path folder) throws IOException {
        TestJar.orderHandler(folder.resolve("orders.jar"));
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar+ssl://broker:6651
                  authentication:
                    oauth2:
                      issuerUrl: https://auth.example.com
                      credentialsUrl: data:application/json;base64,SECRET-inline-credentials
                subscriptions:
                  - name: orders
                    topics: [orders]
                    jar: orders.jar
                """);

        assertThat(validate(List.of(manifest.toString()))).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("oauth2 client credentials [REDACTED]")
                .doesNotContain("SECRET-inline-credentials");
    }

    @Test
    void aBillionLaughsDocumentIsRefusedInWellUnderASecond() {
        Path bomb = ValidateGoldenTest.resources("invalid").resolve("yaml-bomb.yaml");
        validate(List.of(
                ValidateGoldenTest.resources("valid").resolve("full.yaml").toString()));

        long started = System.nanoTime();
        int exitCode = validate(List.of(bomb.toString()));
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(exitCode).isEqualTo(Main.INVALID);
        assertThat(err()).contains("billion laughs");
        assertThat(took).isLessThan(Duration.ofSeconds(1));
    }

    @Test
    void validateIsWhatMainRunsForTheValidateCommand() {
        Path manifest = ValidateGoldenTest.resources("invalid").resolve("cap-on-failover.yaml");

        int exitCode = Main.execute(
                List.of("validate", manifest.toString()),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));

        assertThat(exitCode).isEqualTo(Main.INVALID);
        assertThat(err()).contains("cap-on-failover.yaml:7:11: subscriptions[0].type:");
    }

    @Test
    void environmentSubstitutionIsAppliedBeforeTheSettingsArePrinted(@TempDir Path folder) throws IOException {
        TestJar.orderHandler(folder.resolve("orders.jar"));
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: ${PULSAR_URL:-pulsar://fallback:6650}
                subscriptions:
                  - name: orders
                    topics: [orders]
                    jar: orders.jar
                    concurrency: ${CONCURRENCY:-3}
                """);

        assertThat(ValidateCommand.execute(
                        List.of(manifest.toString()),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        Map.of("CONCURRENCY", "7")))
                .isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .contains("serviceUrl: pulsar://fallback:6650")
                .contains("concurrency: 7");
    }

    @Test
    void aNamedPipeAsTheJarIsRefusedWithoutBeingOpened(@TempDir Path folder) throws Exception {
        assertThat(new ProcessBuilder("mkfifo", folder.resolve("orders.jar").toString())
                        .start()
                        .waitFor())
                .isZero();
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                subscriptions:
                  - name: orders
                    topics: [orders]
                    jar: orders.jar
                """);

        long started = System.nanoTime();
        int exitCode = validate(List.of(manifest.toString()));

        assertThat(exitCode).isEqualTo(Main.INVALID);
        assertThat(err())
                .isEqualTo(manifest + ":6:10: subscriptions[0].jar: must be a JAR file or a folder of JARs, '"
                        + folder.resolve("orders.jar")
                        + "' is a named pipe; point jar at the JAR your build produces\n");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    }

    private Path manifestWithAHandlerTimeout(Path folder) throws IOException {
        TestJar.orderHandler(folder.resolve("orders.jar"));
        return Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                subscriptions:
                  - name: orders
                    topics: [orders]
                    jar: orders.jar
                    handlerTimeout: 30s
                """);
    }

    @Test
    void anOldManifestIsToldWhichKeyItWritesChangedItsMeaningAndStaysValid(@TempDir Path folder) throws IOException {
        Path manifest = manifestWithAHandlerTimeout(folder);
        // A table in which handlerTimeout changed its meaning (ChangedMeaningsTest checks the lines it makes).
        ValidateCommand validate = new ValidateCommand(
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                ValidateGoldenTest.ENVIRONMENT,
                checked -> List.of(checked.locations().get("subscriptions[0].handlerTimeout")
                        + ": subscriptions[0].handlerTimeout: its meaning changed in 9.9.9: a call past it is"
                        + " interrupted"));

        for (List<String> args :
                List.of(List.of(manifest.toString()), List.of("--skip-jar-check", manifest.toString()))) {
            err.reset();
            assertThat(new CommandLine(validate).execute(args.toArray(String[]::new)))
                    .as(err())
                    .isZero();
            assertThat(err())
                    .as("validate %s", args)
                    .contains("settle: warning: " + manifest.toAbsolutePath().normalize()
                            + ":7:21: subscriptions[0].handlerTimeout: its meaning changed in 9.9.9: a call past it"
                            + " is interrupted\n");
        }
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("subscription orders (");
    }

    @Test
    void validateWarnsWhereAManifestWritesHandlerTimeoutWhoseMeaningChangedInIssue44(@TempDir Path folder)
            throws IOException {
        Path manifest = manifestWithAHandlerTimeout(folder);

        assertThat(validate(List.of(manifest.toString()))).as(err()).isZero();
        assertThat(err())
                .contains(":7:21: subscriptions[0].handlerTimeout: its meaning changed in 0.1.0: a call still running"
                        + " past it is interrupted and settled as a timeout failure (before, it only failed /livez)");
    }
}
