package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GenerationStoreTest {
    @TempDir
    Path dataDir;

    private static GenerationRecord upload(int number, String sha) {
        return new GenerationRecord(
                number, sha, "com.acme.Handler", GenerationRecord.Source.UPLOAD, Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Test
    void whatIsSavedIsReadBackAfterARestart() throws Exception {
        GenerationStore store = new GenerationStore(dataDir, "orders");
        GenerationRecord manifest = new GenerationRecord(
                1, "m", "com.acme.Handler", GenerationRecord.Source.MANIFEST, Instant.parse("2026-01-01T00:00:00Z"));
        store.save(Optional.empty(), 2, "m", List.of(manifest, upload(2, "a")), "test");

        CodeStore.State read = new GenerationStore(dataDir, "orders").load().orElseThrow();
        assertThat(read.active()).isEqualTo(2);
        assertThat(read.manifestSha256()).isEqualTo("m");
        assertThat(read.kept()).containsExactly(upload(2, "a"), manifest);
    }

    @Test
    void onlyTheThreeHighestGenerationsAndTheirJarsAreKept() throws Exception {
        GenerationStore store = new GenerationStore(dataDir, "orders");
        Files.createDirectories(store.folder());
        for (String sha : List.of("a", "b", "c", "d")) {
            Files.writeString(store.local(sha), sha);
        }
        store.save(
                Optional.empty(),
                4,
                "m",
                List.of(upload(1, "a"), upload(2, "b"), upload(3, "c"), upload(4, "d")),
                "test");

        assertThat(store.load().orElseThrow().kept())
                .extracting(GenerationRecord::number)
                .containsExactly(4, 3, 2);
        try (Stream<Path> files = Files.list(store.folder())) {
            assertThat(files.map(path -> path.getFileName().toString()))
                    .containsExactlyInAnyOrder("generations.properties", "b.jar", "c.jar", "d.jar");
        }
    }

    @Test
    void noStateIsEmptyAndAnyNameGetsAFolder() throws Exception {
        assertThat(new GenerationStore(dataDir, "orders").load()).isEmpty();
        assertThat(GenerationStore.folderName("orders-processor_1.2")).isEqualTo("orders-processor_1.2");
        assertThat(GenerationStore.folderName("..")).isEqualTo("x-2e2e");
        assertThat(GenerationStore.folderName("a/b")).isEqualTo("x-612f62");
    }

    @Test
    void aStateFileThatCannotBeReadSaysWhatToDo() throws Exception {
        GenerationStore store = new GenerationStore(dataDir, "orders");
        Files.createDirectories(store.folder());
        Files.writeString(store.folder().resolve("generations.properties"), "active=two\n");
        org.assertj.core.api.Assertions.assertThatThrownBy(store::load)
                .hasMessageContaining("cannot be read")
                .hasMessageContaining("move it away to start from the manifest");
    }
}
