package dev.settle.quickstart;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.stream.Stream;

/**
 * A fresh clone of the repository, for a test that runs Maven as a reader does: every file of the working tree but
 * the build's output (each module's {@code target} folder) and Git's own, copied into a folder of the test's. A build
 * there starts from nothing, as a reader's first one does, and writes into the copy only: never into the tree's
 * {@code target} folders, which other modules' tests read while these run (a build in the tree once rewrote the
 * runtime's class folders under {@code runtime-it}, which lost a class mid-run: {@code NoClassDefFoundError}).
 */
final class FreshClone {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    private FreshClone() {}

    /** Copies the repository into {@code folder} (emptied first); returns it. About 10 MB, under a second. */
    static Path into(Path folder) throws IOException {
        deleteRecursively(folder);
        Files.createDirectories(folder);
        Files.walkFileTree(ROOT, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path directory, BasicFileAttributes attributes)
                    throws IOException {
                if (isBuildOutput(directory) || directory.equals(ROOT.resolve(".git"))) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(folder.resolve(ROOT.relativize(directory)));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                // Links are copied as links (the walk does not follow them); permissions too (./mvnw, ./settle).
                Files.copy(
                        file,
                        folder.resolve(ROOT.relativize(file)),
                        LinkOption.NOFOLLOW_LINKS,
                        StandardCopyOption.COPY_ATTRIBUTES);
                return FileVisitResult.CONTINUE;
            }
        });
        return folder;
    }

    /** A module's build output: a folder named target beside a pom.xml (a source package named target is kept). */
    private static boolean isBuildOutput(Path directory) {
        return directory.getFileName().toString().equals("target") && Files.exists(directory.resolveSibling("pom.xml"));
    }

    /** Deletes a folder, if there is one, with all it holds; links are deleted, never followed. */
    static void deleteRecursively(Path folder) throws IOException {
        if (!Files.exists(folder, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(folder)) {
            for (Path path : paths.sorted((a, b) -> b.compareTo(a)).toList()) {
                Files.delete(path);
            }
        }
    }
}
