package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestLoaderTest {
    @TempDir
    Path folder;

    @BeforeEach
    void createTheHandlerJar() throws IOException {
        Files.createFile(folder.resolve("orders.jar"));
    }

    private Manifest load(String yaml, Map<String, String> environment) throws Exception {
        return ManifestLoader.load(Files.writeString(folder.resolve("settle.yaml"), yaml), environment);
    }

    private ManifestException refused(String yaml, Map<String, String> environment) {
        return (ManifestException) org.assertj.core.api.Assertions.catchThrowable(() -> load(yaml, environment));
    }

    private static String subscription(String extra) {
        return """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                subscriptions:
                  - name: orders
                    topics: [orders]
                    jar: orders.jar
                """ + extra.indent(4);
    }

    @Test
    void aDataDirOrPackageCacheOthersCanWriteOrALinkIsRefusedOnItsLine() throws Exception {
        Path shared = Files.createDirectory(folder.resolve("shared"));
        Files.setPosixFilePermissions(shared, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        Path link = Files.createSymbolicLink(folder.resolve("link"), shared);
        Files.writeString(folder.resolve("token.txt"), "0123456789abcdef".repeat(2));

        ManifestException refused = refused("""
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                  packageCache: link
                admin:
                  token: {file: token.txt}
                  dataDir: shared
                subscriptions:
                  - name: orders
                    topics: [orders]
                    jar: orders.jar
                """, Map.of());

        assertThat(refused.problems())
                .extracting(problem -> problem.path() + ": " + problem.message())
                .containsExactly(
                        "pulsar.packageCache: the path '" + link + "' is a symbolic link (to '" + shared + "'); name"
                                + " the real folder, one this user owns and alone can write (chmod 700)",
                        "admin.dataDir: the path '" + shared + "' is writable by others (rwxrwxrwx), who could plant a"
                                + " JAR in it; run chmod go-w '" + shared + "' (700 is best), or name a folder of this"
                                + " user's own");
    }

    @Test
    void defaultsFillEveryOptionalSetting() throws Exception {
        Manifest manifest = load(subscription(""), Map.of());

        SubscriptionSpec spec = manifest.subscriptions().get(0);
        assertThat(spec)
                .isEqualTo(SubscriptionSpec.builder("orders", java.util.List.of("persistent://public/default/orders"))
                        .jar(folder.resolve("orders.jar").toAbsolutePath().normalize())
                        .build());
        assertThat(spec.retries().failureBackoff()).contains(FailureBackoff.DEFAULT);
        assertThat(manifest.http()).isEqualTo(HttpSettings.DEFAULT);
        assertThat(manifest.pulsar()).isEqualTo(PulsarSettings.of("pulsar://localhost:6650"));
        assertThat(manifest.file()).isAbsolute();
    }

    @Test
    void shortTopicNamesAreExpandedAsPulsarExpandsThem() throws Exception {
        Manifest manifest = load(subscription("").replace("[orders]", "[orders, acme/shop/returns]"), Map.of());

        assertThat(manifest.subscriptions().get(0).topics().names())
                .containsExactly("persistent://public/default/orders", "persistent://acme/shop/returns");
    }

    @Test
    void everyValueReadIsLocatedForLaterProblems() throws Exception {
        Manifest manifest = load(subscription("handler: com.acme.OrderHandler"), Map.of());

        assertThat(manifest.locate("subscriptions[0].jar"))
                .isEqualTo(new Location(folder.resolve("settle.yaml"), 6, 10));
        assertThat(manifest.locate("subscriptions[0].handler").line()).isEqualTo(7);
        assertThat(manifest.locate("subscriptions[0]").line()).isEqualTo(4);
    }

    @Test
    void variablesAreSubstitutedWithDefaultsForUnsetOrEmptyOnes() throws Exception {
        Manifest manifest = load(subscription("""
                concurrency: ${CONCURRENCY}
                ackTimeout: ${ACK_TIMEOUT:-45s}
                handlerTimeout: ${EMPTY:-2m}
                config:
                  greeting: hello ${WHO}!
                  literal: $${NOT_A_VARIABLE}
                """), Map.of("CONCURRENCY", "6", "WHO", "world", "EMPTY", ""));

        SubscriptionSpec spec = manifest.subscriptions().get(0);
        assertThat(spec.concurrency()).isEqualTo(6);
        assertThat(spec.consumer().ackTimeout()).contains(Duration.ofSeconds(45));
        assertThat(spec.handlerTimeout()).isEqualTo(Duration.ofMinutes(2));
        assertThat(spec.config())
                .containsEntry("greeting", "hello world!")
                .containsEntry("literal", "${NOT_A_VARIABLE}");
        assertThat(manifest.fromEnvironment("subscriptions[0].config.greeting")).isTrue();
        assertThat(manifest.fromEnvironment("subscriptions[0].config.literal")).isFalse();
        assertThat(manifest.fromEnvironment("subscriptions[0].name")).isFalse();
    }

    @Test
    void anUnsetVariableWithoutDefaultIsAProblemAtItsValue() {
        ManifestException refused = refused(subscription("handler: ${HANDLER_CLASS}"), Map.of());

        assertThat(refused.problems())
                .singleElement()
                .hasToString(folder.resolve("settle.yaml")
                        + ":7:14: subscriptions[0].handler: environment variable 'HANDLER_CLASS' is not set; set it, or give"
                        + " a default with '${HANDLER_CLASS:-value}'");
    }

    @Test
    void aSubstitutedValueCannotChangeTheDocumentsStructure() throws Exception {
        Manifest manifest = load(subscription("config:\n  note: ${NOTE}"), Map.of("NOTE", "x\n  evil: [1]"));

        assertThat(manifest.subscriptions().get(0).config()).containsExactly(Map.entry("note", "x\n  evil: [1]"));
    }

    @Test
    void tokensAreReadFromTheEnvironmentOrAFileIntoSecrets() throws Exception {
        Files.writeString(folder.resolve("token"), "from-file\n");
        String manifest = """
                pulsar:
                  serviceUrl: pulsar+ssl://broker:6651
                  authentication:
                    token: %s
                subscriptions:
                  - {name: orders, topics: [orders], jar: orders.jar}
                """;

        Manifest fromEnvironment = load(manifest.formatted("{env: TOKEN}"), Map.of("TOKEN", "from-env"));
        Manifest fromFile = load(manifest.formatted("{file: token}"), Map.of());

        assertThat(fromEnvironment.pulsar().authentication()).containsInstanceOf(PulsarSettings.Token.class);
        assertThat(((PulsarSettings.Token)
                                fromEnvironment.pulsar().authentication().get())
                        .token()
                        .reveal())
                .isEqualTo("from-env");
        // A file is named, not read into the manifest: the client reads it again whenever it changes.
        assertThat(fromFile.pulsar().authentication()).contains(new PulsarSettings.TokenFile(folder.resolve("token")));
        assertThat(fromEnvironment.toString()).doesNotContain("from-env");
    }

    @Test
    void authParamsWrittenAsAMappingReachThePluginAsAJsonObjectWithTheEnvironmentSubstituted() throws Exception {
        Manifest manifest = load("""
                pulsar:
                  serviceUrl: pulsar://broker:6650
                  authentication:
                    authPlugin: org.apache.pulsar.client.impl.auth.AuthenticationBasic
                    authParams:
                      userId: orders
                      password: ${PASSWORD}
                subscriptions:
                  - {name: orders, topics: [orders], jar: orders.jar}
                """, Map.of("PASSWORD", "p\"w\\d"));

        PulsarSettings.Plugin plugin =
                (PulsarSettings.Plugin) manifest.pulsar().authentication().orElseThrow();
        assertThat(plugin.className()).isEqualTo("org.apache.pulsar.client.impl.auth.AuthenticationBasic");
        assertThat(plugin.params().reveal()).isEqualTo("{\"userId\":\"orders\",\"password\":\"p\\\"w\\\\d\"}");
        assertThat(manifest.toString()).doesNotContain("p\"w");
    }

    @Test
    void allowInsecureConnectionTurnsTheDefaultHostnameVerificationOff() throws Exception {
        Manifest manifest = load("""
                pulsar:
                  serviceUrl: pulsar+ssl://broker:6651
                  tls: {allowInsecureConnection: true}
                subscriptions:
                  - {name: orders, topics: [orders], jar: orders.jar}
                """, Map.of());

        assertThat(manifest.pulsar().tls()).isEqualTo(new PulsarSettings.Tls(Optional.empty(), false, true));
    }

    @Test
    void mergeKeysShareSettingsAndExplicitKeysWin() throws Exception {
        Manifest manifest = load("""
                x-defaults: &defaults
                  jar: orders.jar
                  concurrency: 2
                  maxAttempts: 3
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                subscriptions:
                  - <<: *defaults
                    name: orders
                    topics: [orders]
                    deadLetterTopic: orders-dlq
                    concurrency: 5
                """, Map.of());

        SubscriptionSpec spec = manifest.subscriptions().get(0);
        assertThat(spec.concurrency()).isEqualTo(5);
        assertThat(spec.deadLetter())
                .contains(new DeadLetter(3, "persistent://public/default/orders-dlq", Optional.of("orders-dlq")));
    }

    @Test
    void aJarMayBeAFolderOfJars() throws Exception {
        Files.createDirectory(folder.resolve("handlers"));

        Manifest manifest = load(subscription("").replace("jar: orders.jar", "jar: handlers"), Map.of());

        assertThat(manifest.subscriptions().get(0).handler().jar())
                .isEqualTo(folder.resolve("handlers").toAbsolutePath());
    }

    @Test
    void capOnFailoverSubscriptionRefusesToStart() {
        ManifestException refused = refused(subscription("""
                type: Failover
                maxAttempts: 5
                deadLetterTopic: orders-dlq
                """), Map.of());

        assertThat(refused.problems()).singleElement().satisfies(problem -> {
            assertThat(problem.path()).isEqualTo("subscriptions[0].type");
            assertThat(problem.message()).contains("the broker keeps no redelivery count");
        });
    }

    @Test
    void commitBatchIsReadWithEachKeyDefaultingToCommitBatchsDefault() throws Exception {
        String exactlyOnce = "guarantee: exactly-once\n";

        CommitBatch absent =
                load(subscription(exactlyOnce), Map.of()).subscriptions().get(0).commitBatch();
        CommitBatch both = load(
                        subscription(exactlyOnce + "commitBatch: {maxDeliveries: 500, maxDelay: 250ms}"), Map.of())
                .subscriptions()
                .get(0)
                .commitBatch();
        CommitBatch onlyCount = load(subscription(exactlyOnce + "commitBatch: {maxDeliveries: 10000}"), Map.of())
                .subscriptions()
                .get(0)
                .commitBatch();
        CommitBatch noDelay = load(subscription(exactlyOnce + "commitBatch: {maxDelay: 0ms}"), Map.of())
                .subscriptions()
                .get(0)
                .commitBatch();
        CommitBatch longest = load(subscription(exactlyOnce + "commitBatch: {maxDelay: PT1S}"), Map.of())
                .subscriptions()
                .get(0)
                .commitBatch();

        assertThat(absent).isEqualTo(CommitBatch.DEFAULT);
        assertThat(both).isEqualTo(new CommitBatch(500, Duration.ofMillis(250)));
        assertThat(onlyCount).isEqualTo(new CommitBatch(10_000, CommitBatch.DEFAULT_MAX_DELAY));
        assertThat(noDelay).isEqualTo(new CommitBatch(CommitBatch.DEFAULT_MAX_DELIVERIES, Duration.ZERO));
        assertThat(longest).isEqualTo(new CommitBatch(CommitBatch.DEFAULT_MAX_DELIVERIES, Duration.ofSeconds(1)));
    }

    /** A transaction of one delivery has nothing to wait for: the delay is checked, then left unused. */
    @Test
    void oneDeliveryPerTransactionAcceptsADelayAndLeavesItUnused() throws Exception {
        Manifest manifest = load(
                subscription("guarantee: exactly-once\ncommitBatch: {maxDeliveries: 1, maxDelay: 500ms}"), Map.of());

        assertThat(manifest.subscriptions().get(0).commitBatch()).isEqualTo(CommitBatch.ONE_PER_DELIVERY);
        assertThat(refused(
                                subscription("guarantee: exactly-once\ncommitBatch: {maxDeliveries: 1, maxDelay: 5s}"),
                                Map.of())
                        .problems())
                .extracting(problem -> problem.path() + ": " + problem.message())
                .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .startsWith("subscriptions[0].commitBatch.maxDelay: must be at most 1s, was '5s'");
    }

    @Test
    void commitBatchValuesOutsideTheirBoundsAreRefusedEachAtItsKey() {
        ManifestException refused = refused(
                subscription("guarantee: exactly-once\ncommitBatch: {maxDeliveries: 10001, maxDelay: -PT0.005S}"),
                Map.of());

        assertThat(refused.problems())
                .extracting(problem -> problem.path() + ": " + problem.message())
                .containsExactly(
                        "subscriptions[0].commitBatch.maxDeliveries: must be at most 10000, was '10001': a"
                                + " transaction's acknowledgements go to the broker in one request. Lower it to 10000"
                                + " or less",
                        "subscriptions[0].commitBatch.maxDelay: must not be negative, was '-PT0.005S'");
    }

    @Test
    void transactionTimeoutIsReadAtExactlyOnceAndAbsentByDefault() throws Exception {
        SubscriptionSpec absent = load(subscription("guarantee: exactly-once"), Map.of())
                .subscriptions()
                .get(0);
        SubscriptionSpec written = load(
                        subscription("guarantee: exactly-once\nhandlerTimeout: 2s\ntransactionTimeout: 10s"), Map.of())
                .subscriptions()
                .get(0);
        // The least it may be: handlerTimeout + commitBatch.maxDelay + 1s, exactly.
        SubscriptionSpec least = load(
                        subscription("guarantee: exactly-once\nhandlerTimeout: 2s\ncommitBatch: {maxDelay: 500ms}\n"
                                + "transactionTimeout: 3500ms"),
                        Map.of())
                .subscriptions()
                .get(0);

        assertThat(absent.transactionTimeout()).isEmpty();
        assertThat(written.transactionTimeout()).contains(Duration.ofSeconds(10));
        assertThat(least.transactionTimeout()).contains(Duration.ofMillis(3500));
    }

    @Test
    void aTransactionTimeoutThatLeavesLessThanASecondPastTheCallsIsRefusedNamingEachPart() {
        ManifestException refused = refused(
                subscription("guarantee: exactly-once\nhandlerTimeout: 2s\ncommitBatch: {maxDelay: 500ms}\n"
                        + "transactionTimeout: 3499ms"),
                Map.of());

        assertThat(refused.problems())
                .extracting(problem -> problem.path() + ": " + problem.message())
                .containsExactly("subscriptions[0].transactionTimeout: must be at least 1s longer than handlerTimeout"
                        + " + commitBatch.maxDelay (2s + 500ms = 2500ms), was '3499ms': a transaction must outlive"
                        + " its deliveries' calls, then store their outputs and commit, or the coordinator aborts it"
                        + " while its calls are within their lease. Lengthen transactionTimeout to 3500ms or more, or"
                        + " shorten handlerTimeout");
    }

    @Test
    void theDefaultHandlerTimeoutCountsAgainstAWrittenTransactionTimeout() {
        assertThat(refused(subscription("guarantee: exactly-once\ntransactionTimeout: 30s"), Map.of())
                        .problems())
                .extracting(problem -> problem.path() + ": " + problem.message())
                .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .startsWith("subscriptions[0].transactionTimeout: must be at least 1s longer than handlerTimeout +"
                        + " commitBatch.maxDelay (1m + 10ms = 60010ms), was '30s'");
    }

    @Test
    void transactionTimeoutAtAtLeastOnceIsRefusedAsMisplacedOnly() {
        assertThat(refused(subscription("transactionTimeout: 1s"), Map.of()).problems())
                .extracting(problem -> problem.path() + ": " + problem.message())
                .containsExactly("subscriptions[0].transactionTimeout: is set while the guarantee is at-least-once"
                        + " (the default): transactionTimeout bounds exactly-once transactions; set guarantee:"
                        + " exactly-once or remove transactionTimeout");
    }

    @Test
    void aSubscriptionBuiltInCodeRefusesATransactionTimeoutTooShortForItsCalls() {
        SubscriptionSpec.Builder builder = SubscriptionSpec.builder("orders", List.of("persistent://public/default/o"))
                .guarantee(Guarantee.EXACTLY_ONCE)
                .handlerTimeout(Duration.ofSeconds(2))
                .transactionTimeout(Duration.ofMillis(3009));

        assertThatThrownBy(builder::build)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("transactionTimeout");
        assertThat(builder.transactionTimeout(Duration.ofMillis(3010)).build().transactionTimeout())
                .contains(Duration.ofMillis(3010));
    }

    @Test
    void commitBatchAtAtLeastOnceIsRefusedButNotBesideAMisspeltGuarantee() {
        String batch = "commitBatch: {maxDeliveries: 50}";

        assertThat(refused(subscription("guarantee: at-least-once\n" + batch), Map.of())
                        .problems())
                .extracting(problem -> problem.path() + ": " + problem.message())
                .containsExactly("subscriptions[0].commitBatch: is set while the guarantee is at-least-once:"
                        + " commitBatch groups exactly-once transactions; set guarantee: exactly-once or remove"
                        + " commitBatch");
        assertThat(refused(subscription("guarantee: exactly_once\n" + batch), Map.of())
                        .problems())
                .extracting(problem -> problem.path())
                .containsExactly("subscriptions[0].guarantee");
    }

    @Test
    void aManifestLargerThanTheLimitIsRefusedBeforeParsing() throws IOException {
        Path huge = Files.writeString(folder.resolve("huge.yaml"), "# " + "x".repeat(ManifestLoader.MAX_BYTES) + "\n");

        assertThatThrownBy(() -> ManifestLoader.load(huge, Map.of()))
                .isInstanceOf(ManifestException.class)
                .hasMessageContaining("is larger than");
    }

    @Test
    void aMissingFileIsAnIoErrorNotAProblem() {
        assertThatThrownBy(() -> ManifestLoader.load(folder.resolve("missing.yaml"), Map.of()))
                .isInstanceOf(NoSuchFileException.class);
    }

    @Test
    void aFileThatIsNotUtf8IsRefused() throws IOException {
        Path latin1 = Files.write(folder.resolve("latin1.yaml"), new byte[] {'a', ':', ' ', (byte) 0xE9, '\n'});

        assertThatThrownBy(() -> ManifestLoader.load(latin1, Map.of()))
                .isInstanceOf(ManifestException.class)
                .hasMessageContaining("is not UTF-8");
    }
}
