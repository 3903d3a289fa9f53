package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestWatcherTest {
    @TempDir
    Path folder;

    @Test
    void aManifestPointingAtAnEndlessDeviceIsNotReadAtAll() throws Exception {
        Path manifest = Files.createSymbolicLink(folder.resolve("settle.yaml"), Path.of("/dev/zero"));

        long began = System.nanoTime();
        byte[] digest = ManifestWatcher.digest(manifest);

        assertThat(digest).isNull();
        assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(1));
    }

    @Test
    void aManifestOverTheLimitIsReadNoFurtherThanTheLimit() throws Exception {
        Path manifest = folder.resolve("settle.yaml");
        byte[] big = new byte[3 * 1024 * 1024];
        Files.write(manifest, big);
        byte[] first = ManifestWatcher.digest(manifest);
        // A change past the limit is not seen: nothing past it was read.
        big[big.length - 1] = 1;
        Files.write(manifest, big);

        assertThat(ManifestWatcher.digest(manifest)).isEqualTo(first).isNotNull();
    }

    @Test
    void aReloadThatThrowsDoesNotEndTheWatch() throws Exception {
        Path manifest = folder.resolve("settle.yaml");
        Files.writeString(manifest, "first");
        AtomicInteger reloads = new AtomicInteger();
        try (ManifestWatcher watcher = ManifestWatcher.start(manifest, ManifestWatcher.digest(manifest), () -> {
            reloads.incrementAndGet();
            throw new IllegalStateException("this reload failed");
        })) {
            // Replaced whole, as a ConfigMap is: a plain write can show the watcher an empty file first, which is a
            // change of its own.
            replace(manifest, "second");
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> reloads.get() >= 1);
            int afterTheFailedReload = reloads.get();
            replace(manifest, "third");
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> reloads.get() > afterTheFailedReload);
        }
    }

    private static void replace(Path file, String content) throws Exception {
        Path next = Files.writeString(file.resolveSibling(file.getFileName() + ".next"), content);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
