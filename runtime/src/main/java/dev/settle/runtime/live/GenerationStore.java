package dev.settle.runtime.live;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A subscription's generations on disk, in {@code <dataDir>/subscriptions/<name>/}: {@code generations.properties}
 * (which generations are kept, which one runs, and the sha256 of the manifest's own {@code jar:} when it was
 * written) and one {@code <sha256>.jar} per uploaded generation kept. Every file is written to a temporary file,
 * forced to disk, renamed over the old one, and the folder forced, so a crash leaves the old state or the new one,
 * never half of either.
 *
 * <p>The store of {@code admin.codeStore: disk}: one pod's own, for a lone runtime.
 *
 * <p>Not thread-safe: its {@link LiveSubscription} calls it under its own lock.
 */
final class GenerationStore implements CodeStore {
    private static final String STATE = "generations.properties";
    private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*");

    private final Path folder;

    GenerationStore(Path dataDir, String subscription) {
        this.folder = dataDir.resolve("subscriptions").resolve(folderName(subscription));
    }

    /** A file name for any subscription name: as it is when safe, else its UTF-8 bytes in hex. */
    static String folderName(String subscription) {
        return SAFE_NAME.matcher(subscription).matches()
                ? subscription
                : "x-" + HexFormat.of().formatHex(subscription.getBytes(StandardCharsets.UTF_8));
    }

    Path folder() {
        return folder;
    }

    @Override
    public String where() {
        return folder.toString();
    }

    /**
     * The uploaded JAR of a generation.
     *
     * @throws IllegalArgumentException when {@code sha256} is not one (it names a file: never a path)
     */
    @Override
    public Path local(String sha256) {
        return folder.resolve(RecordChecks.sha256("sha256", sha256) + ".jar");
    }

    /** Only looks: an upload's JAR is in the folder or nowhere; {@link LiveSubscription} checks its sha256. */
    @Override
    public Path fetch(GenerationRecord upload) {
        return local(upload.sha256());
    }

    /** A new file in the folder to receive an upload; the caller moves it into place or deletes it. */
    @Override
    public Path stagingFile() throws IOException {
        Files.createDirectories(folder);
        return Files.createTempFile(folder, "upload-", ".part");
    }

    @Override
    public Optional<State> load() throws IOException {
        Path file = folder.resolve(STATE);
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            properties.load(in);
        }
        try {
            return Optional.of(State.of(properties));
        } catch (RuntimeException e) {
            throw new IOException(file + " cannot be read (" + e + "); move it away to start from the manifest", e);
        }
    }

    /** Writes the state, keeping the {@link #KEPT} highest generations, and deletes the JARs no longer kept. */
    @Override
    public State save(Optional<State> basis, State next, String by) throws IOException {
        State state = new State(next.active(), next.manifestSha256(), CodeStore.kept(next.kept()), next.ramp());
        List<GenerationRecord> kept = state.kept();
        Properties properties = state.properties();
        Files.createDirectories(folder);
        Path temp = Files.createTempFile(folder, STATE, ".tmp");
        try (OutputStream out = Files.newOutputStream(temp)) {
            properties.store(out, "Settle: this subscription's kept generations; written by the runtime");
        }
        moveIntoPlace(temp, folder.resolve(STATE));
        Set<String> keptJars = kept.stream()
                .filter(g -> g.source() == GenerationRecord.Source.UPLOAD)
                .map(g -> g.sha256() + ".jar")
                .collect(Collectors.toSet());
        try (Stream<Path> files = Files.list(folder)) {
            for (Path file : files.toList()) {
                String name = file.getFileName().toString();
                if (name.endsWith(".jar") && !keptJars.contains(name)) {
                    Files.deleteIfExists(file);
                }
            }
        }
        return state;
    }

    /** Forces {@code temp} to disk, renames it to {@code target} and forces the folder. */
    static void moveIntoPlace(Path temp, Path target) throws IOException {
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
            channel.force(true);
        }
        try {
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
        }
        forceFolder(target.getParent());
    }

    private static void forceFolder(Path folder) {
        // Makes the rename itself durable; some file systems cannot open a folder for this, and say so by throwing.
        try (FileChannel channel = FileChannel.open(folder, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException | UncheckedIOException e) {
            // Best effort: the rename is atomic even where it cannot be forced.
        }
    }
}
