package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.ManifestKey.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChangedMeaningsTest {
    @TempDir
    Path folder;

    private Manifest load() throws Exception {
        Files.createFile(folder.resolve("orders.jar"));
        return ManifestLoader.load(Files.writeString(folder.resolve("settle.yaml"), """
                        pulsar:
                          serviceUrl: pulsar://localhost:6650
                        subscriptions:
                          - name: orders
                            topics: [orders]
                            jar: orders.jar
                            handlerTimeout: 30s
                          - name: returns
                            topics: [returns]
                            jar: orders.jar
                        """), Map.of());
    }

    @Test
    void aKeyWrittenWhoseMeaningChangedIsNamedWhereItIsWrittenWithItsVersion() throws Exception {
        List<ManifestKey> table = new ArrayList<>(ManifestKeys.all());
        ManifestKey timeout = ManifestKeys.key(Level.SUBSCRIPTION, "handlerTimeout");
        table.set(
                table.indexOf(timeout),
                new ManifestKey(
                        timeout.level(),
                        timeout.name(),
                        timeout.type(),
                        timeout.required(),
                        timeout.defaultValue(),
                        Optional.empty(),
                        timeout.min(),
                        timeout.max(),
                        timeout.allowed(),
                        timeout.doc(),
                        timeout.since(),
                        List.of(new ManifestKey.MeaningChange("9.9.9", "a call past it is interrupted")),
                        timeout.reload()));

        assertThat(ChangedMeanings.of(load(), table))
                .containsExactly(folder.resolve("settle.yaml").toAbsolutePath().normalize()
                        + ":7:21: subscriptions[0].handlerTimeout: its meaning changed in 9.9.9: a call past it is"
                        + " interrupted");
    }

    @Test
    void handlerTimeoutIsTheOneKeyWhoseMeaningChanged() throws Exception {
        // Issue 44: a call past it is interrupted now, where it only failed /livez before.
        assertThat(ChangedMeanings.of(load()))
                .singleElement()
                .asString()
                .contains(":7:21: subscriptions[0].handlerTimeout: its meaning changed in 0.1.0: a call still running"
                        + " past it is interrupted and settled as a timeout failure");
    }
}
