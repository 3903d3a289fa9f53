package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OwnedFolderTest {
    @TempDir
    Path folder;

    @Test
    void aMissingFolderIsCreatedForThisUserAlone() throws IOException {
        Path cache = folder.resolve("cache").resolve("settle");

        OwnedFolder.create(cache, "pulsar.packageCache");

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cache)))
                .isEqualTo("rwx------");
        assertThat(OwnedFolder.problem(cache, "pulsar.packageCache")).isEmpty();
    }

    @Test
    void aFolderOthersCanWriteIsRefusedSayingWhatToDo() throws IOException {
        Path shared = Files.createDirectory(folder.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));

        assertThat(OwnedFolder.problem(shared, "pulsar.packageCache"))
                .hasValue("pulsar.packageCache '" + shared + "' is writable by others (rwxrwxrwx), who could plant a"
                        + " JAR in it; run chmod go-w '" + shared + "' (700 is best), or name a folder of this"
                        + " user's own");
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxr-x"));
        assertThat(OwnedFolder.problem(shared, "pulsar.packageCache")).isPresent();
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThat(OwnedFolder.problem(shared, "pulsar.packageCache")).isEmpty();
    }

    @Test
    void aSymbolicLinkIsRefusedAlsoToAFolderOfOurOwn() throws IOException {
        Path real = Files.createDirectory(folder.resolve("real"));
        Files.setPosixFilePermissions(real, PosixFilePermissions.fromString("rwx------"));
        Path link = Files.createSymbolicLink(folder.resolve("link"), real);

        assertThat(OwnedFolder.problem(link, "admin.dataDir"))
                .hasValueSatisfying(problem -> assertThat(problem)
                        .startsWith("admin.dataDir '" + link + "' is a symbolic link (to '" + real + "')"));
        assertThatThrownBy(() -> OwnedFolder.create(link, "admin.dataDir"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("is a symbolic link");
    }

    @Test
    void aFolderOfAnotherUserIsRefused() throws IOException {
        Path theirs = Files.createDirectory(folder.resolve("theirs"));
        Files.setPosixFilePermissions(theirs, PosixFilePermissions.fromString("rwx------"));
        int owner = (Integer) Files.getAttribute(theirs, "unix:uid");

        // As seen by a process of another user than the folder's owner.
        assertThat(OwnedFolder.problem(theirs, "pulsar.packageCache", Optional.of(owner + 1)))
                .hasValue("pulsar.packageCache '" + theirs + "' is owned by uid " + owner + ", not by this"
                        + " process's user (uid " + (owner + 1) + "), who could not tell its files from planted"
                        + " ones; name a folder of this user's own, or chown it to uid " + (owner + 1));
        assertThat(OwnedFolder.problem(theirs, "pulsar.packageCache", Optional.of(owner)))
                .isEmpty();
    }
}
