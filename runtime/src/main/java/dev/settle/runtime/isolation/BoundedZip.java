package dev.settle.runtime.isolation;

import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.jar.Attributes;
import java.util.jar.Manifest;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * One JAR, read through {@link ZipFile} with every entry bounded by {@link JarLimits}: bytes are counted as they
 * are inflated, and the size in the zip header is at most a hint, since a crafted archive can claim 100 bytes for
 * an entry that inflates to a gigabyte. Nothing is unpacked to disk.
 *
 * <p>Multi-release JARs are read as the running JVM would: {@code META-INF/versions/N/} wins over the base entry
 * for the highest {@code N} not above the JVM's feature version.
 *
 * <p>Thread-safe, as {@link ZipFile} is.
 */
final class BoundedZip implements Closeable {

    private static final String MANIFEST = "META-INF/MANIFEST.MF";
    private static final String VERSIONS = "META-INF/versions/";
    private static final int FIRST_BUFFER = 8192;

    private final Path jar;
    private final ZipFile zip;
    private final JarLimits limits;
    private final Optional<Manifest> manifest;
    private final boolean multiRelease;

    private BoundedZip(Path jar, ZipFile zip, JarLimits limits) throws IOException {
        this.jar = jar;
        this.zip = zip;
        this.limits = limits;
        this.manifest = readManifest();
        this.multiRelease = manifest.map(
                        m -> "true".equalsIgnoreCase(m.getMainAttributes().getValue(Attributes.Name.MULTI_RELEASE)))
                .orElse(false);
    }

    /**
     * Opens a JAR and reads its manifest.
     *
     * @throws java.util.zip.ZipException when it is not a zip archive
     * @throws JarLimitException when it has too many entries or its manifest inflates too far
     */
    static BoundedZip open(Path jar, JarLimits limits) throws IOException {
        ZipFile zip = new ZipFile(jar.toFile());
        try {
            if (zip.size() > limits.maxEntries()) {
                throw JarLimitException.tooManyEntries(jar, zip.size(), limits.maxEntries());
            }
            return new BoundedZip(jar, zip, limits);
        } catch (IOException | RuntimeException e) {
            zip.close();
            throw e;
        }
    }

    Path path() {
        return jar;
    }

    Optional<Manifest> manifest() {
        return manifest;
    }

    /** The names of every entry, in the JAR's order. */
    java.util.List<String> names() {
        return zip.stream().map(ZipEntry::getName).toList();
    }

    /** Whether the JAR holds {@code name}, as {@link #read} would find it. */
    boolean contains(String name) {
        return entry(name).isPresent();
    }

    /** The bytes of an entry, or empty when there is none; never more than the limit. */
    Optional<byte[]> read(String name) throws IOException {
        Optional<ZipEntry> entry = entry(name);
        return entry.isEmpty() ? Optional.empty() : Optional.of(read(entry.get()));
    }

    /** A stream of an entry that fails once it has given more than the limit, or empty when there is none. */
    Optional<InputStream> stream(String name) throws IOException {
        Optional<ZipEntry> entry = entry(name);
        if (entry.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Bounded(zip.getInputStream(entry.get()), entry.get()));
    }

    @Override
    public void close() throws IOException {
        zip.close();
    }

    private Optional<ZipEntry> entry(String name) {
        if (multiRelease && !name.startsWith("META-INF/")) {
            for (int version = Runtime.version().feature(); version >= 9; version--) {
                ZipEntry versioned = zip.getEntry(VERSIONS + version + "/" + name);
                if (versioned != null && !versioned.isDirectory()) {
                    return Optional.of(versioned);
                }
            }
        }
        ZipEntry entry = zip.getEntry(name);
        return entry == null || entry.isDirectory() ? Optional.empty() : Optional.of(entry);
    }

    private byte[] read(ZipEntry entry) throws IOException {
        int limit = limits.maxEntryBytes();
        // The header's size only sizes the first buffer, and never past the limit.
        long claimed = entry.getSize();
        byte[] buffer = new byte[(int) Math.max(1, Math.min(claimed >= 0 ? claimed + 1 : FIRST_BUFFER, limit + 1L))];
        int length = 0;
        try (InputStream in = zip.getInputStream(entry)) {
            while (true) {
                if (length == buffer.length) {
                    if (length > limit) {
                        throw JarLimitException.entryTooLarge(jar, entry.getName(), limit, claimed);
                    }
                    buffer = Arrays.copyOf(buffer, (int) Math.min(2L * length, limit + 1L));
                }
                int read = in.read(buffer, length, buffer.length - length);
                if (read < 0) {
                    break;
                }
                length += read;
            }
        }
        if (length > limit) {
            throw JarLimitException.entryTooLarge(jar, entry.getName(), limit, claimed);
        }
        return length == buffer.length ? buffer : Arrays.copyOf(buffer, length);
    }

    private Optional<Manifest> readManifest() throws IOException {
        ZipEntry entry = zip.getEntry(MANIFEST);
        if (entry == null) {
            return Optional.empty();
        }
        return Optional.of(new Manifest(new ByteArrayInputStream(read(entry))));
    }

    /** Counts what the caller reads; the count, not the header, decides. */
    private final class Bounded extends FilterInputStream {
        private final ZipEntry entry;
        private long given;

        Bounded(InputStream in, ZipEntry entry) {
            super(in);
            this.entry = entry;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                count(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int read = super.read(b, off, len);
            if (read > 0) {
                count(read);
            }
            return read;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(n);
            count(skipped);
            return skipped;
        }

        private void count(long bytes) throws JarLimitException {
            given += bytes;
            if (given > limits.maxEntryBytes()) {
                throw JarLimitException.entryTooLarge(jar, entry.getName(), limits.maxEntryBytes(), entry.getSize());
            }
        }
    }
}
