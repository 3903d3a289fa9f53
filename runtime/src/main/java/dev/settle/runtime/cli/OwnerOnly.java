package dev.settle.runtime.cli;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Files and folders only their owner may read ({@code settle dev}'s data folder 0700, its log 0600): on a file system
 * without POSIX permissions (Windows) nothing is changed.
 */
final class OwnerOnly {
    private OwnerOnly() {}

    /** Makes {@code folder}, which exists, 0700. */
    static void folder(Path folder) throws IOException {
        if (posix(folder)) {
            Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwx------"));
        }
    }

    /** Creates {@code file} 0600 when it is not there yet (never readable by others for a moment), or makes it 0600. */
    static void file(Path file) throws IOException {
        if (!posix(file.getParent())) {
            return;
        }
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException there) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
    }

    private static boolean posix(Path path) {
        return Files.getFileAttributeView(path, PosixFileAttributeView.class) != null;
    }
}
