package dev.settle.testbroker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The class-data-sharing archive of the test processes of one runtime JAR, beside it: {@code
 * settle-test-<size>-<modified>.jsa}. Recorded by the first {@code settle run} of a build that ends by itself or by
 * SIGTERM ({@code -XX:ArchiveClassesAtExit}), then mapped by every later process ({@code -XX:SharedArchiveFile}), so
 * that each does not parse and verify the same few thousand classes again: about half of a test runtime's CPU up to
 * ready (see {@link SettleProcess#JVM_OPTIONS} for the figures). The image makes its own archive ahead of time
 * (deploy/image/train.sh); a test build has no such step, hence the recording at exit.
 *
 * <p>Tests start processes four classes at a time: one process records at a time, each to a file of its own, and its
 * file becomes the archive by an atomic rename once it has exited, so a process never maps a half-written archive.
 */
final class TestClassArchive {
    private static final Map<Path, TestClassArchive> BY_JAR = new ConcurrentHashMap<>();

    /** SIGTERM's exit status: the runtime stopped on it, after the JVM wrote the archive. */
    private static final int SIGTERM_STATUS = 128 + 15;

    private final Path archive;
    private final AtomicBoolean recording = new AtomicBoolean();

    private TestClassArchive(Path jar) {
        try {
            BasicFileAttributes attributes = Files.readAttributes(jar, BasicFileAttributes.class);
            // Named after the JAR as built: the JVM maps an archive only over the class path it was recorded with,
            // so a rebuilt JAR gets an archive of its own (mvn clean removes the old ones with target/).
            archive = jar.resolveSibling("settle-test-" + attributes.size() + "-"
                    + attributes.lastModifiedTime().toMillis() + ".jsa");
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + jar + " to name its class-data archive", e);
        }
    }

    static TestClassArchive forJar(Path jar) {
        return BY_JAR.computeIfAbsent(jar, TestClassArchive::new);
    }

    /**
     * Adds to {@code command} the JVM options that map the archive or, when there is none yet, that record it (if
     * {@code mayRecord} and no other process records it now); returns the file this process records to, or null.
     */
    Path addOptions(List<String> command, boolean mayRecord) {
        // Quiet: a JVM that records warns on stdout of each class it cannot archive (picocli's are Java 5 classes),
        // and one whose archive does not match its class path warns of that, where a test reads the runtime's output.
        command.add("-Xlog:cds=off");
        command.add("-Xlog:cds+dynamic=off");
        if (Files.isRegularFile(archive)) {
            // auto: a JVM that cannot map the archive loads its classes as usual.
            command.add("-Xshare:auto");
            command.add("-XX:SharedArchiveFile=" + archive);
            return null;
        }
        if (mayRecord && recording.compareAndSet(false, true)) {
            Path partial = archive.resolveSibling(archive.getFileName() + "." + System.nanoTime() + ".recording");
            command.add("-XX:ArchiveClassesAtExit=" + partial);
            return partial;
        }
        return null;
    }

    /**
     * Once {@code process} (started with {@link #addOptions}'s {@code partial}) has exited, makes its recording the
     * archive, or lets the next process record if it left none that is whole.
     */
    void keepWhenExited(Process process, Path partial) {
        process.onExit().thenRun(() -> {
            int status = process.exitValue();
            // A SIGKILL (137) can cut the write short, and a JVM crashes (SIGBUS) on a truncated archive: keep only
            // one written by a JVM that went through its own exit.
            boolean whole = status < 128 || status == SIGTERM_STATUS;
            try {
                if (whole && Files.size(partial) > 0) {
                    Files.move(partial, archive, StandardCopyOption.ATOMIC_MOVE);
                    return;
                }
                Files.deleteIfExists(partial);
            } catch (IOException e) {
                // None written (the JVM could not, or was killed first): the next run records.
                deleteQuietly(partial);
            }
            recording.set(false);
        });
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // Left in target/, which mvn clean removes; no process maps a *.recording file.
        }
    }
}
