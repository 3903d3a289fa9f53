package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.live.ManifestChange;
import dev.settle.runtime.manifest.ManifestKey.Level;
import dev.settle.runtime.manifest.ManifestKey.Reload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reload behaviour the key table states is what a reload does ({@code live/ManifestChange}): one manifest, then the
 * same with one key changed, for every key a subscription of a handler can change alone.
 */
class ManifestKeysReloadTest {
    @TempDir
    Path folder;

    /** Each key, and a subscription entry's lines that give it another value than the first manifest's. */
    private static final Map<String, String> CHANGED = changed();

    private static Map<String, String> changed() {
        Map<String, String> changed = new LinkedHashMap<>();
        changed.put("name", "name: renamed");
        changed.put("topics", "topics: [other]");
        changed.put("type", "type: Key_Shared");
        changed.put("handler", "handler: com.acme.Other");
        changed.put("jar", "jar: other.jar");
        changed.put("schema", "schema: bytes");
        changed.put("ackTimeout", "ackTimeout: 30s");
        changed.put("maxRetryDelay", "maxRetryDelay: 5s");
        changed.put("failureBackoff", "failureBackoff: none");
        changed.put("concurrency", "concurrency: 4");
        changed.put("maxPendingOutputs", "maxPendingOutputs: 10");
        changed.put("receiverQueueSize", "receiverQueueSize: 10");
        changed.put("initialPosition", "initialPosition: latest");
        changed.put("handlerTimeout", "handlerTimeout: 30s");
        changed.put("batchIndexAck", "batchIndexAck: true");
        changed.put("guarantee", "guarantee: exactly-once");
        changed.put("config", "config: {region: eu}");
        changed.put("function", "function: com.acme.Function");
        changed.put("output", "output: {compression: zstd}");
        changed.put("onException", "onException: [{type: java.lang.IllegalStateException, outcome: drop}]");
        return changed;
    }

    private Manifest manifest(String file, String top, String extra) throws Exception {
        for (String jar : new String[] {"orders.jar", "other.jar"}) {
            if (!Files.exists(folder.resolve(jar))) {
                Files.createFile(folder.resolve(jar));
            }
        }
        String entry = "name: orders\ntopics: [orders]\njar: orders.jar\nhandler: com.acme.Orders\n";
        for (String line : extra.split("\n")) {
            String key = line.substring(0, line.indexOf(':'));
            // A function replaces the handler: the two together are refused.
            String replaced = key.equals("function") ? "(handler|function)" : key;
            entry = entry.replaceAll("(?m)^" + replaced + ":.*\n", "") + line + "\n";
        }
        return ManifestLoader.load(
                Files.writeString(
                        folder.resolve(file),
                        "pulsar:\n  serviceUrl: pulsar://localhost:6650\n" + top + "subscriptions:\n"
                                + ("- " + entry.indent(2).substring(2))),
                Map.of());
    }

    private static ManifestChange between(Manifest running, Manifest next) {
        Map<String, String> sha = new LinkedHashMap<>();
        running.subscriptions().forEach(spec -> sha.put(spec.name(), "same bytes"));
        next.subscriptions().forEach(spec -> sha.put(spec.name(), "same bytes"));
        return ManifestChange.between(running, sha, next, sha);
    }

    @Test
    void aChangeOfOneSubscriptionKeyDoesWhatItsRowSays() throws Exception {
        Manifest running = manifest("running.yaml", "", "handler: com.acme.Orders");
        for (Map.Entry<String, String> change : CHANGED.entrySet()) {
            Manifest next = manifest(change.getKey() + ".yaml", "", change.getValue());
            ManifestChange reload = between(running, next);
            Reload expected =
                    ManifestKeys.key(Level.SUBSCRIPTION, change.getKey()).reload();
            Reload done = switch (reload.subscriptions().getOrDefault("orders", ManifestChange.Kind.REMOVED)) {
                case SWAP -> Reload.SWAPS_CODE;
                case RESTART -> Reload.RESTARTS_SUBSCRIPTION;
                case REMOVED ->
                    reload.of(ManifestChange.Kind.ADDED).isEmpty() ? Reload.REFUSED : Reload.REPLACES_SUBSCRIPTION;
                default -> Reload.PER_ENTRY;
            };
            assertThat(done).as(change.getKey() + " (" + reload + ")").isEqualTo(expected);
        }
    }

    @Test
    void aChangeOfAKeyOutsideTheSubscriptionsChangesASectionWhichAReloadRefuses() throws Exception {
        Manifest running = manifest("running.yaml", "", "handler: com.acme.Orders");
        record Section(String yaml, Level level, String key) {}
        int i = 0;
        for (Section section : new Section[] {
            new Section("http:\n  port: 9090\n", Level.HTTP, "port"),
            new Section("startup:\n  timeout: 1m\n", Level.STARTUP, "timeout"),
            new Section("shutdown:\n  grace: 5s\n", Level.SHUTDOWN, "grace"),
            new Section("tracing: true\n", Level.ROOT, "tracing")
        }) {
            Manifest next = manifest("section" + i++ + ".yaml", section.yaml(), "handler: com.acme.Orders");
            assertThat(between(running, next).sectionsChanged())
                    .as(section.yaml())
                    .hasSize(1);
            assertThat(ManifestKeys.key(section.level(), section.key()).reload())
                    .as(section.yaml())
                    .isEqualTo(Reload.REFUSED);
        }
    }
}
