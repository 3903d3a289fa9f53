package dev.settle.testbroker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The class-data-sharing archive of the test processes of one runtime JAR, beside it: {@code
 * settle-test-<size>-<modified>.jsa}, made once a build and then mapped by every process ({@code
 * -XX:SharedArchiveFile}), so that each does not parse and verify the same few thousand classes again: about half of
 * a test runtime's CPU up to ready (see {@link SettleProcess#JVM_OPTIONS} for the figures). The image makes its archive
 * ahead of time from a training run (deploy/image/train.sh); a test build has no such step, so the build's first
 * {@code settle run} lists the classes it loads ({@code -XX:DumpLoadedClassList}, written as they load: nothing to do
 * at its exit, which tests time) and, once it has exited, a JVM of its own dumps the archive from that list in the
 * background, as train.sh does. Not {@code -XX:ArchiveClassesAtExit}: that dump runs inside the exiting JVM and took
 * 6 s and more of a SIGTERM's stop on a loaded machine.
 *
 * <p>Tests start processes four classes at a time: one process lists at a time, and the dump becomes the archive by an
 * atomic rename once its JVM has exited cleanly, so a process never maps a half-written archive (a JVM crashes,
 * SIGBUS, on a truncated one).
 */
final class TestClassArchive {
    private static final Map<Path, TestClassArchive> BY_JAR = new ConcurrentHashMap<>();

    private final Path jar;
    private final Path archive;
    private final AtomicBoolean listing = new AtomicBoolean();

    private TestClassArchive(Path jar) {
        this.jar = jar;
        try {
            BasicFileAttributes attributes = Files.readAttributes(jar, BasicFileAttributes.class);
            // Named after the JAR as built: the JVM maps an archive only over the class path it was made with, so a
            // rebuilt JAR gets an archive of its own (mvn clean removes the old ones with target/).
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
     * Adds to {@code command} the JVM options that map the archive or, when there is none yet, that list the classes
     * the process loads (if {@code mayList} and no other process lists them now); returns the list, or null.
     */
    Path addOptions(List<String> command, boolean mayList) {
        // Quiet: a JVM whose archive does not match its class path warns of that on stdout, where tests read the
        // runtime's output; it then loads its classes as usual (-Xshare:auto).
        command.add("-Xlog:cds=off");
        command.add("-Xlog:cds+dynamic=off");
        if (Files.isRegularFile(archive)) {
            command.add("-Xshare:auto");
            command.add("-XX:SharedArchiveFile=" + archive);
            return null;
        }
        if (mayList && listing.compareAndSet(false, true)) {
            Path list = archive.resolveSibling(archive.getFileName() + "." + System.nanoTime() + ".classes");
            command.add("-XX:DumpLoadedClassList=" + list);
            return list;
        }
        return null;
    }

    /** Once {@code process} (started with {@link #addOptions}'s {@code list}) has exited, dumps the archive. */
    void dumpWhenExited(Process process, Path list) {
        process.onExit().thenRunAsync(() -> dump(list), task -> {
            Thread thread = new Thread(task, "settle-test-class-archive");
            thread.setDaemon(true);
            thread.start();
        });
    }

    private void dump(Path list) {
        Path classes = list.resolveSibling(list.getFileName() + ".whole");
        Path partial = list.resolveSibling(list.getFileName() + ".jsa");
        try {
            String listed = Files.readString(list);
            // A SIGKILL can cut the last line short; a line listed twice can crash the dump (see train.sh).
            List<String> lines =
                    List.of(listed.substring(0, listed.lastIndexOf('\n') + 1).split("\n"));
            Files.write(classes, new LinkedHashSet<>(lines));
            Process dump = new ProcessBuilder(
                            "java",
                            "-Xshare:dump",
                            "-XX:SharedClassListFile=" + classes,
                            "-XX:SharedArchiveFile=" + partial,
                            "-cp",
                            jar.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (dump.waitFor() == 0 && Files.size(partial) > 0) {
                Files.move(partial, archive, StandardCopyOption.ATOMIC_MOVE);
                deleteOlderArchives();
                return;
            }
        } catch (IOException e) {
            // No archive this time (the list could not be read, or the dump not written): the next run lists again.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            deleteQuietly(list);
            deleteQuietly(classes);
            deleteQuietly(partial);
        }
        listing.set(false);
    }

    /** Those of JARs built before this one (55 MB each): builds without mvn clean would pile them up. */
    private void deleteOlderArchives() {
        try (DirectoryStream<Path> older = Files.newDirectoryStream(archive.getParent(), "settle-test-*.jsa")) {
            for (Path each : older) {
                if (!each.equals(archive)) {
                    // A process that maps it keeps its pages: Linux frees a deleted file once no one maps it.
                    deleteQuietly(each);
                }
            }
        } catch (IOException e) {
            // Left in target/, which mvn clean removes.
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // Left in target/, which mvn clean removes; no process maps these files.
        }
    }
}
