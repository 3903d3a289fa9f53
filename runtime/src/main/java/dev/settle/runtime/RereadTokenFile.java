package dev.settle.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A token kept in a file and read again when the file changes, for {@code AuthenticationFactory.token(Supplier)}.
 *
 * <p>The client asks for the token each time it authenticates: on every connection and on every refresh the broker
 * asks for ({@code authenticationRefreshCheckSeconds}). So the file is looked at no more than once per
 * {@link #CHECK_EVERY_NANOS}, and read only when its modification time, size or identity (inode) changed: a
 * Kubernetes secret is swapped by replacing a symbolic link, a sidecar usually renames a new file into place, and
 * both change the identity even within one tick of a coarse clock. When the file cannot be read, or is empty
 * (caught half-written), the last good token is kept and the problem logged once, until a read succeeds again.
 */
final class RereadTokenFile implements Supplier<String> {
    private static final Logger log = LoggerFactory.getLogger(RereadTokenFile.class);
    static final long CHECK_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Path file;
    private final LongSupplier nanoTime;
    // Guarded by this: the client may authenticate several connections at once.
    private String token;
    private Version version;
    private long checkedAt;
    private boolean failing;

    private record Version(Object key, long modifiedMillis, long size) {
        static Version of(BasicFileAttributes attributes) {
            return new Version(
                    attributes.fileKey(), attributes.lastModifiedTime().toMillis(), attributes.size());
        }
    }

    private RereadTokenFile(Path file, LongSupplier nanoTime, String token, Version version) {
        this.file = file;
        this.nanoTime = nanoTime;
        this.token = token;
        this.version = version;
        this.checkedAt = nanoTime.getAsLong();
    }

    /** Reads the token a first time; a failure here stops the start, since there is no token to fall back on. */
    static RereadTokenFile open(Path file, LongSupplier nanoTime) throws IOException {
        Objects.requireNonNull(file, "file");
        Version version = Version.of(Files.readAttributes(file, BasicFileAttributes.class));
        return new RereadTokenFile(file, nanoTime, read(file), version);
    }

    @Override
    public synchronized String get() {
        long now = nanoTime.getAsLong();
        if (now - checkedAt < CHECK_EVERY_NANOS) {
            return token;
        }
        checkedAt = now;
        try {
            Version current = Version.of(Files.readAttributes(file, BasicFileAttributes.class));
            if (current.equals(version) && !failing) {
                return token;
            }
            String read = read(file);
            boolean changed = !read.equals(token);
            token = read;
            version = current;
            if (failing) {
                log.info("the token file {} can be read again", file);
                failing = false;
            }
            if (changed) {
                log.info("read a new token from {}", file);
            }
        } catch (IOException | RuntimeException e) {
            if (!failing) {
                log.warn(
                        "cannot read the token file {} ({}); keeping the last token read until it can be read",
                        file,
                        e.toString());
                failing = true;
            }
        }
        return token;
    }

    private static String read(Path file) throws IOException {
        String token = Files.readString(file, StandardCharsets.UTF_8).strip();
        if (token.isEmpty()) {
            throw new IOException("the file is empty");
        }
        return token;
    }
}
