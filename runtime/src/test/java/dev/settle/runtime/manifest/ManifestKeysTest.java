package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.ManifestKey.Level;
import dev.settle.runtime.manifest.ManifestKey.ValueType;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The key table on its own: one row per key, each complete, and its defaults the model's. */
class ManifestKeysTest {
    @Test
    void everyKeyIsDeclaredOnceWithItsDocumentationAndVersion() {
        Set<String> paths = new HashSet<>();
        for (ManifestKey key : ManifestKeys.all()) {
            assertThat(paths.add(key.path())).as(key.path() + " declared once").isTrue();
            assertThat(key.doc()).as(key.path()).isNotBlank();
            assertThat(key.since()).as(key.path()).matches("\\d+\\.\\d+\\.\\d+");
            assertThat(key.defaultValue().isPresent() && key.computedDefault().isPresent())
                    .as(key.path() + ": a written default or a computed one, not both")
                    .isFalse();
            assertThat(key.required() && key.defaultValue().isPresent())
                    .as(key.path() + ": required keys have no default")
                    .isFalse();
            assertThat(key.allowed().isEmpty())
                    .as(key.path() + ": allowed values go with ENUM")
                    .isEqualTo(key.type() != ValueType.ENUM);
            key.defaultValue()
                    .filter(value -> key.type() == ValueType.ENUM)
                    .ifPresent(value -> assertThat(key.allowed()).as(key.path()).contains(value));
        }
    }

    @Test
    void everyWrittenDefaultIsWithinItsKeysBounds() {
        for (ManifestKey key : ManifestKeys.all()) {
            if (key.defaultValue().isEmpty()) {
                continue;
            }
            if (key.type() == ValueType.INTEGER || key.type() == ValueType.NUMBER) {
                double value = Double.parseDouble(key.defaultValue().get());
                key.min()
                        .ifPresent(min -> assertThat(value)
                                .as(key.path())
                                .isGreaterThanOrEqualTo(Double.parseDouble(min.limit())));
                key.max()
                        .ifPresent(max ->
                                assertThat(value).as(key.path()).isLessThanOrEqualTo(Double.parseDouble(max.limit())));
            }
            if (key.type() == ValueType.DURATION || key.type() == ValueType.DURATION_OR_ZERO) {
                Duration value = key.durationDefault();
                key.min()
                        .ifPresent(min -> assertThat(value)
                                .as(key.path())
                                .isGreaterThanOrEqualTo(DurationText.parse(min.limit())));
                key.max()
                        .ifPresent(max ->
                                assertThat(value).as(key.path()).isLessThanOrEqualTo(DurationText.parse(max.limit())));
            }
        }
    }

    /** The model's constants are what code elsewhere (builders, the test kit) starts from: they must be the table's. */
    @Test
    void theTablesDefaultsAreTheModelsDefaults() {
        assertThat(ManifestKeys.key(Level.ROOT, "tracing").booleanDefault()).isFalse();
        assertThat(ManifestKeys.key(Level.HTTP, "port").intDefault()).isEqualTo(HttpSettings.DEFAULT.port());
        assertThat(ManifestKeys.key(Level.HTTP, "bindAddress").textDefault())
                .isEqualTo(HttpSettings.DEFAULT.bindAddress());
        assertThat(ManifestKeys.key(Level.HTTP, "probeDetail").booleanDefault())
                .isEqualTo(HttpSettings.DEFAULT.probeDetail());
        assertThat(ManifestKeys.key(Level.STARTUP, "timeout").durationDefault())
                .isEqualTo(StartupSettings.DEFAULT.timeout());
        assertThat(ManifestKeys.key(Level.SHUTDOWN, "grace").durationDefault())
                .isEqualTo(ShutdownSettings.DEFAULT.grace());
        assertThat(ManifestKeys.key(Level.PULSAR, "packageTimeout").durationDefault())
                .isEqualTo(PulsarSettings.DEFAULT_PACKAGE_TIMEOUT);
        assertThat(ManifestKeys.key(Level.TLS, "hostnameVerification").booleanDefault())
                .isEqualTo(PulsarSettings.Tls.defaults().hostnameVerification());
        assertThat(ManifestKeys.key(Level.TLS, "allowInsecureConnection").booleanDefault())
                .isEqualTo(PulsarSettings.Tls.defaults().allowInsecureConnection());
        assertThat(ManifestKeys.key(Level.ADMIN, "port").intDefault()).isEqualTo(AdminSettings.DEFAULT_PORT);
        assertThat(ManifestKeys.key(Level.ADMIN, "bindAddress").textDefault())
                .isEqualTo(AdminSettings.DEFAULT_BIND_ADDRESS);
        assertThat(ManifestKeys.key(Level.ADMIN, "retiredLoaderCheck").durationDefault())
                .isEqualTo(AdminSettings.DEFAULT_RETIRED_LOADER_CHECK);
        // Sizes: the reader's own parse of the table's text.
        assertThat(ManifestKeys.key(Level.PULSAR, "packageMaxSize").textDefault())
                .isEqualTo("100MiB");
        assertThat(PulsarSettings.DEFAULT_PACKAGE_MAX_SIZE).isEqualTo(100L * 1024 * 1024);
        assertThat(ManifestKeys.key(Level.ADMIN, "maxJarSize").textDefault()).isEqualTo("100MiB");
        assertThat(AdminSettings.DEFAULT_MAX_JAR_SIZE).isEqualTo(100L * 1024 * 1024);

        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "type").textDefault())
                .isEqualTo(SubscriptionSpec.DEFAULT_TYPE.manifestName());
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "concurrency").intDefault())
                .isEqualTo(SubscriptionSpec.DEFAULT_CONCURRENCY);
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "handlerTimeout").durationDefault())
                .isEqualTo(SubscriptionSpec.DEFAULT_HANDLER_TIMEOUT);
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "receiverQueueSize").intDefault())
                .isEqualTo(ConsumerOptions.DEFAULT.receiverQueueSize());
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "initialPosition").textDefault())
                .isEqualToIgnoringCase(ConsumerOptions.DEFAULT.initialPosition().name());
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "batchIndexAck").booleanDefault())
                .isEqualTo(ConsumerOptions.DEFAULT.batchIndexAck());
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "maxPendingOutputs").intDefault())
                .isEqualTo(OutputOptions.DEFAULT_MAX_PENDING_OUTPUTS);
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "guarantee").textDefault())
                .isEqualTo(Guarantee.AT_LEAST_ONCE.manifestName());
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "instanceId").intDefault())
                .isEqualTo(FunctionSettings.NONE.instanceId());
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "numInstances").intDefault())
                .isEqualTo(FunctionSettings.NONE.numInstances());
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "inputProperties").booleanDefault())
                .isEqualTo(FunctionSettings.NONE.inputProperties());
        assertThat(ManifestKeys.key(Level.SUBSCRIPTION, "deadLetterStackTrace").booleanDefault())
                .isTrue();

        FailureBackoff backoff = new FailureBackoff(
                ManifestKeys.key(Level.FAILURE_BACKOFF, "initial").durationDefault(),
                Double.parseDouble(
                        ManifestKeys.key(Level.FAILURE_BACKOFF, "multiplier").textDefault()),
                ManifestKeys.key(Level.FAILURE_BACKOFF, "max").durationDefault());
        assertThat(backoff).isEqualTo(FailureBackoff.DEFAULT);
        assertThat(new CommitBatch(
                        ManifestKeys.key(Level.COMMIT_BATCH, "maxDeliveries").intDefault(),
                        ManifestKeys.key(Level.COMMIT_BATCH, "maxDelay").durationDefault()))
                .isEqualTo(CommitBatch.DEFAULT);
        assertThat(new BreakerSettings(
                        ManifestKeys.key(Level.BREAKER, "enabled").booleanDefault(),
                        ManifestKeys.key(Level.BREAKER, "minKeys").intDefault(),
                        ManifestKeys.key(Level.BREAKER, "window").durationDefault(),
                        ManifestKeys.key(Level.BREAKER, "maxProbeInterval").durationDefault(),
                        List.of()))
                .isEqualTo(BreakerSettings.DEFAULT);
        OutputOptions output = OutputOptions.DEFAULT;
        assertThat(ManifestKeys.key(Level.OUTPUT, "batching").booleanDefault()).isEqualTo(output.batching());
        assertThat(ManifestKeys.key(Level.OUTPUT, "batchingMaxDelay").durationDefault())
                .isEqualTo(output.batchingMaxDelay());
        assertThat(ManifestKeys.key(Level.OUTPUT, "compression").textDefault())
                .isEqualTo(output.compression().manifestName());
        assertThat(ManifestKeys.key(Level.OUTPUT, "maxPendingMessages").intDefault())
                .isEqualTo(output.maxPendingMessages());
    }

    @Test
    void aMappingAcceptsTheKeysOfItsLevelInTableOrder() {
        assertThat(Level.COMMIT_BATCH.names()).containsExactly("maxDeliveries", "maxDelay");
        assertThat(Level.SUBSCRIPTION.required()).containsExactly("name", "jar");
        assertThat(Level.WINDOW.names())
                .startsWith(
                        "windowLengthCount",
                        "windowLengthDurationMs",
                        "slidingIntervalCount",
                        "slidingIntervalDurationMs")
                .contains("timestampExtractorClassName");
    }
}
