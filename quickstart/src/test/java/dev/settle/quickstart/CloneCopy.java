package dev.settle.quickstart;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A copy of the repository for a test that runs Maven as a reader does in a clone: every file of the working tree but
 * Git's own and the tests' work, in a folder of the test's. Its builds write into the copy only, never into the tree's
 * {@code target} folders, which other modules' tests read while these run (a build in the tree once rewrote the
 * runtime's class folders under {@code runtime-it}, which lost a class mid-run: {@code NoClassDefFoundError}).
 */
final class CloneCopy {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /**
     * For a build in a copy: the compiler's incremental mode compares the sources' paths with those of the last build,
     * which named the tree's folders, and so recompiles every module (runtime's 579 classes, 24 s against 11 s); by
     * their timestamps the classes are up to date.
     */
    static final String UP_TO_DATE = "-Dmaven.compiler.useIncrementalCompilation=false";

    /**
     * What a module's build leaves in its {@code target} folder that the next build finds up to date: class folders,
     * the compiler's records, the JARs and other files at its top. Not the tests' work and reports, which other
     * modules' tests may be writing while this copies.
     */
    private static final Set<String> BUILD_OUTPUT = Set.of(
            "classes", "test-classes", "generated-sources", "generated-test-sources", "maven-status", "maven-archiver");

    private CloneCopy() {}

    /**
     * Copies the clone, built as the tree is, into {@code folder} (emptied first): its sources and each module's build
     * output, timestamps kept, so that a build there with {@link #UP_TO_DATE} compiles nothing the tree's build
     * compiled. About 200 MB, a second.
     */
    static Path built(Path folder) throws IOException {
        deleteRecursively(folder);
        Files.createDirectories(folder);
        Files.walkFileTree(ROOT, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path directory, BasicFileAttributes attributes)
                    throws IOException {
                if (directory.equals(ROOT.resolve(".git")) || directory.equals(ROOT.resolve("target"))) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Path parent = directory.getParent();
                if (parent != null
                        && isBuildOutput(parent)
                        && !BUILD_OUTPUT.contains(directory.getFileName().toString())) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                Files.createDirectories(folder.resolve(ROOT.relativize(directory)));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                // Links are copied as links (the walk does not follow them); permissions too (./mvnw, ./settle), and
                // times, which tell a build what is up to date.
                try {
                    Files.copy(
                            file,
                            folder.resolve(ROOT.relativize(file)),
                            LinkOption.NOFOLLOW_LINKS,
                            StandardCopyOption.COPY_ATTRIBUTES);
                } catch (NoSuchFileException gone) {
                    // Removed since the walk listed it: a file another module's test wrote beside the JARs.
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException failure) throws IOException {
                if (failure instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw failure;
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
