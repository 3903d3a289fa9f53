package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GenerationStoreTest {
    @TempDir
    Path dataDir;

    /** A sha256 made of one hex digit, 64 times: "a" is aaaa...a. */
    private static String sha(String digit) {
        return digit.repeat(64);
    }

    private static GenerationRecord upload(int number, String digit) {
        return new GenerationRecord(
                number,
                sha(digit),
                "com.acme.Handler",
                GenerationRecord.Source.UPLOAD,
                Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Test
    void whatIsSavedIsReadBackAfterARestart() throws Exception {
        GenerationStore store = new GenerationStore(dataDir, "orders");
        GenerationRecord manifest = new GenerationRecord(
                1,
                sha("f"),
                "com.acme.Handler",
                GenerationRecord.Source.MANIFEST,
                Instant.parse("2026-01-01T00:00:00Z"));
        store.save(Optional.empty(), 2, sha("f"), List.of(manifest, upload(2, "a")), "test");

        CodeStore.State read = new GenerationStore(dataDir, "orders").load().orElseThrow();
        assertThat(read.active()).isEqualTo(2);
        assertThat(read.manifestSha256()).isEqualTo(sha("f"));
        assertThat(read.kept()).containsExactly(upload(2, "a"), manifest);
    }

    @Test
    void onlyTheThreeHighestGenerationsAndTheirJarsAreKept() throws Exception {
        GenerationStore store = new GenerationStore(dataDir, "orders");
        Files.createDirectories(store.folder());
        for (String sha : List.of("a", "b", "c", "d")) {
            Files.writeString(store.local(sha(sha)), sha);
        }
        store.save(
                Optional.empty(),
                4,
                sha("f"),
                List.of(upload(1, "a"), upload(2, "b"), upload(3, "c"), upload(4, "d")),
                "test");

        assertThat(store.load().orElseThrow().kept())
                .extracting(GenerationRecord::number)
                .containsExactly(4, 3, 2);
        try (Stream<Path> files = Files.list(store.folder())) {
            assertThat(files.map(path -> path.getFileName().toString()))
                    .containsExactlyInAnyOrder(
                            "generations.properties", sha("b") + ".jar", sha("c") + ".jar", sha("d") + ".jar");
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
        assertThatThrownBy(store::load)
                .hasMessageContaining("cannot be read")
                .hasMessageContaining("move it away to start from the manifest");
    }

    /**
     * Issue 40: a crafted sha256 of {@code ../x} named {@code ../x.jar}, outside the store's folder, which a save then
     * deleted and a fetch overwrote. Such a record is refused as it is read, and no file is touched.
     */
    @Test
    void aRecordWhoseSha256IsAPathIsRefusedAndNoFileIsTouched() throws Exception {
        GenerationStore store = new GenerationStore(dataDir, "orders");
        Files.createDirectories(store.folder());
        Path outside = Files.writeString(store.folder().resolveSibling("x.jar"), "someone else's");
        String state = """
                active=1
                manifestSha256=
                kept=1
                generation.1.sha256=../x
                generation.1.handler=com.acme.Handler
                generation.1.source=UPLOAD
                generation.1.activatedAt=2026-01-01T00:00:00Z
                """;
        Files.writeString(store.folder().resolve("generations.properties"), state);

        assertThatThrownBy(store::load)
                .hasMessageContaining("generation.1.sha256 must be a sha256: 64 lowercase hex digits, was '../x'")
                .hasMessageContaining("move it away to start from the manifest");
        assertThatThrownBy(() -> store.local("../x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PulsarCodeStore.packageOf("public/default", "orders", "../x"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(outside).hasContent("someone else's");
        assertThat(Files.readString(store.folder().resolve("generations.properties")))
                .isEqualTo(state);
        try (Stream<Path> files = Files.list(store.folder())) {
            assertThat(files.map(path -> path.getFileName().toString())).containsExactly("generations.properties");
        }
    }

    @Test
    void everyFieldOfARecordIsCheckedAsDataBeforeUse() {
        String good = "active=1\nmanifestSha256=\nkept=1\ngeneration.1.sha256=" + sha("a")
                + "\ngeneration.1.handler=com.acme.Handler\ngeneration.1.source=UPLOAD"
                + "\ngeneration.1.activatedAt=2026-01-01T00:00:00Z\n";
        assertThat(CodeStore.State.of(properties(good)).active()).isEqualTo(1);

        Map<String, String> refusals = Map.of(
                good.replace(sha("a"), sha("A")), "generation.1.sha256 must be a sha256",
                good.replace(sha("a"), sha("a") + "0"), "generation.1.sha256 must be a sha256",
                good.replace("active=1", "active=0"), "active must be a generation number: a whole number, 1 or more",
                good.replace("active=1", "active=-3"), "active must be a generation number",
                good.replace("kept=1", "kept=1,../2"), "kept must be a generation number",
                good.replace("com.acme.Handler", "../../evil"), "generation.1.handler must be a class name",
                good.replace("source=UPLOAD", "source=url"), "generation.1.source must be MANIFEST or UPLOAD",
                good.replace("manifestSha256=", "manifestSha256=/etc"), "manifestSha256 must be a sha256",
                good.replace("2026-01-01T00:00:00Z", "soon"), "generation.1.activatedAt must be a time");
        refusals.forEach((record, refusal) -> assertThatThrownBy(() -> CodeStore.State.of(properties(record)))
                .as(record)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(refusal));
    }

    private static Properties properties(String text) {
        Properties properties = new Properties();
        try {
            properties.load(new StringReader(text));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return properties;
    }
}
