package dev.settle.runtime.manifest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What a path that is neither a regular file nor a folder is, in words for a message. */
final class FileKind {
    // The file-type bits of st_mode (POSIX <sys/stat.h>).
    private static final int TYPE_MASK = 0170000;
    private static final int FIFO = 0010000;
    private static final int CHARACTER_DEVICE = 0020000;
    private static final int BLOCK_DEVICE = 0060000;
    private static final int SOCKET = 0140000;

    private FileKind() {}

    /** "a named pipe", "a socket", "a character device", "a block device", or a general phrase where unknown. */
    static String of(Path path) {
        try {
            // The "unix" view exists on Linux and macOS; elsewhere the general phrase is the answer.
            int mode = (Integer) Files.getAttribute(path, "unix:mode");
            return switch (mode & TYPE_MASK) {
                case FIFO -> "a named pipe";
                case SOCKET -> "a socket";
                case CHARACTER_DEVICE -> "a character device";
                case BLOCK_DEVICE -> "a block device";
                default -> "neither a regular file nor a folder";
            };
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return "neither a regular file nor a folder";
        }
    }
}
