package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.live.ManifestChange.Kind;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a reloaded manifest changes, per subscription and per section (docs/live-code.md, "Manifest reload"). */
class ManifestChangeTest {
    @TempDir
    Path folder;

    private Manifest manifest(String name, String pulsarUrl, String subscriptions) throws Exception {
        // Only their existence is checked when a manifest loads; the sha256 each test gives stands for the bytes.
        for (String jar : new String[] {"h.jar", "i.jar"}) {
            if (!Files.exists(folder.resolve(jar))) {
                Files.createFile(folder.resolve(jar));
            }
        }
        return ManifestLoader.load(
                Files.writeString(folder.resolve(name), """
                        pulsar:
                          serviceUrl: %s
                        subscriptions:
                        %s""".formatted(pulsarUrl, subscriptions.indent(2))
                        .replace("\n\n", "\n")),
                Map.of());
    }

    private static String sub(String name, String jar, String extra) {
        return """
                - name: %s
                  topics: [persistent://public/default/%s]
                  jar: %s
                %s""".formatted(name, name, jar, extra.isEmpty() ? "" : "  " + extra + "\n");
    }

    private static final Map<String, String> SHA = Map.of("same", "1", "swap", "1", "restart", "1", "gone", "1");

    @Test
    void eachSubscriptionIsClassifiedByWhatDiffers() throws Exception {
        Manifest running = manifest(
                "a.yaml",
                "pulsar://localhost:6650",
                sub("same", "h.jar", "")
                        + sub("swap", "h.jar", "config: {k: v1}")
                        + sub("restart", "h.jar", "")
                        + sub("gone", "h.jar", ""));
        Manifest next = manifest(
                "b.yaml",
                "pulsar://localhost:6650",
                sub("same", "h.jar", "")
                        + sub("swap", "h.jar", "config: {k: v2}")
                        + sub("restart", "h.jar", "receiverQueueSize: 10")
                        + sub("new", "h.jar", ""));
        ManifestChange change = ManifestChange.between(
                running, SHA, next, Map.of("same", "1", "swap", "1", "restart", "1", "new", "1"));

        assertThat(change.subscriptions())
                .containsExactly(
                        Map.entry("same", Kind.UNCHANGED),
                        Map.entry("swap", Kind.SWAP),
                        Map.entry("restart", Kind.RESTART),
                        Map.entry("gone", Kind.REMOVED),
                        Map.entry("new", Kind.ADDED));
        assertThat(change.sectionsChanged()).isEmpty();
        assertThat(change.codeChanged()).containsExactly("swap");
        assertThat(change.isEmpty()).isFalse();
    }

    @Test
    void theSameJarPathWithOtherBytesIsASwapAndAConsumerChangeWithNewCodeIsARestartWithCode() throws Exception {
        Manifest running = manifest("a.yaml", "pulsar://localhost:6650", sub("s", "h.jar", "") + sub("t", "h.jar", ""));
        Manifest next = manifest(
                "b.yaml", "pulsar://localhost:6650", sub("s", "h.jar", "") + sub("t", "i.jar", "concurrency: 2"));
        ManifestChange change =
                ManifestChange.between(running, Map.of("s", "1", "t", "1"), next, Map.of("s", "2", "t", "3"));

        assertThat(change.subscriptions()).containsExactly(Map.entry("s", Kind.SWAP), Map.entry("t", Kind.RESTART));
        assertThat(change.codeChanged()).containsExactlyInAnyOrder("s", "t");
    }

    /**
     * A change of guarantee restarts the subscription: its outputs' producers (no send timeout for transactions) and
     * its driver's commit stage are made with the subscription; the transactions' client is made at the first
     * exactly-once subscription, a reload's too, so the process need not restart.
     */
    @Test
    void aChangeOfGuaranteeRestartsTheSubscription() throws Exception {
        Manifest running = manifest("a.yaml", "pulsar://localhost:6650", sub("s", "h.jar", ""));
        Manifest next = manifest("b.yaml", "pulsar://localhost:6650", sub("s", "h.jar", "guarantee: exactly-once"));

        ManifestChange change = ManifestChange.between(running, Map.of("s", "1"), next, Map.of("s", "1"));

        assertThat(change.subscriptions()).containsExactly(Map.entry("s", Kind.RESTART));
        assertThat(change.sectionsChanged()).isEmpty();
    }

    /**
     * A change of commitBatch needs what a change of guarantee needs, a restart of the subscription: the commit stage
     * that groups deliveries into transactions is made with it. At one delivery per transaction the delay is unused,
     * so changing only it changes nothing.
     */
    @Test
    void aChangeOfCommitBatchRestartsTheSubscriptionAndAnUnusedDelayIsNoChange() throws Exception {
        String exactlyOnce = "guarantee: exactly-once\n  ";
        Manifest running = manifest(
                "a.yaml",
                "pulsar://localhost:6650",
                sub("s", "h.jar", "guarantee: exactly-once")
                        + sub("t", "h.jar", exactlyOnce + "commitBatch: {maxDeliveries: 1, maxDelay: 10ms}")
                        + sub("u", "h.jar", exactlyOnce + "commitBatch: {maxDelay: 10ms}"));
        Manifest next = manifest(
                "b.yaml",
                "pulsar://localhost:6650",
                sub("s", "h.jar", exactlyOnce + "commitBatch: {maxDeliveries: 500}")
                        + sub("t", "h.jar", exactlyOnce + "commitBatch: {maxDeliveries: 1, maxDelay: 200ms}")
                        + sub("u", "h.jar", exactlyOnce + "commitBatch: {maxDelay: 20ms}"));
        Map<String, String> sha = Map.of("s", "1", "t", "1", "u", "1");

        ManifestChange change = ManifestChange.between(running, sha, next, sha);

        assertThat(change.subscriptions())
                .containsExactly(
                        Map.entry("s", Kind.RESTART), Map.entry("t", Kind.UNCHANGED), Map.entry("u", Kind.RESTART));
        assertThat(change.sectionsChanged()).isEmpty();
        assertThat(change.codeChanged()).isEmpty();
    }

    @Test
    void nothingChangedIsEmptyAndAnotherSectionIsNamed() throws Exception {
        Manifest running = manifest("a.yaml", "pulsar://localhost:6650", sub("s", "h.jar", ""));
        Manifest same = manifest("b.yaml", "pulsar://localhost:6650", sub("s", "h.jar", ""));
        Manifest otherBroker = manifest("c.yaml", "pulsar://elsewhere:6650", sub("s", "h.jar", ""));

        assertThat(ManifestChange.between(running, Map.of("s", "1"), same, Map.of("s", "1"))
                        .isEmpty())
                .isTrue();
        ManifestChange change = ManifestChange.between(running, Map.of("s", "1"), otherBroker, Map.of("s", "1"));
        assertThat(change.sectionsChanged()).containsExactly("pulsar");
        assertThat(change.isEmpty()).isFalse();
    }

    @Test
    void turningTracingOnIsASectionThatNeedsARestart() throws Exception {
        Manifest running = manifest("a.yaml", "pulsar://localhost:6650", sub("s", "h.jar", ""));
        Manifest traced = manifest("b.yaml", "pulsar://localhost:6650\ntracing: true", sub("s", "h.jar", ""));

        assertThat(traced.tracing()).isTrue();
        assertThat(ManifestChange.between(running, Map.of("s", "1"), traced, Map.of("s", "1"))
                        .sectionsChanged())
                .containsExactly("tracing");
    }
}
