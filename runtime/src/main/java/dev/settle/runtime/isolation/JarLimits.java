package dev.settle.runtime.isolation;

/**
 * How much of a handler JAR Settle is willing to read: every entry is inflated to at most
 * {@link #maxEntryBytes()}, counted while inflating, so a zip bomb is refused before it fills the heap; a JAR
 * may hold at most {@link #maxEntries()} entries.
 *
 * @param maxEntryBytes the most bytes one class or resource may inflate to
 * @param maxEntries the most entries one JAR may hold
 */
record JarLimits(int maxEntryBytes, int maxEntries) {

    /**
     * 64 MiB an entry: far above any real class file (the format caps a method at 64 KiB of code) and above the
     * resources handlers bundle, yet a quarter of a 256 MB heap. 100 000 entries: shaded handler JARs with their
     * libraries reach tens of thousands; ten times that is a JAR made to exhaust memory, not a build output.
     */
    static final JarLimits DEFAULT = new JarLimits(64 * 1024 * 1024, 100_000);

    JarLimits {
        if (maxEntryBytes < 1 || maxEntryBytes > Integer.MAX_VALUE - 16) {
            throw new IllegalArgumentException("maxEntryBytes out of range: " + maxEntryBytes);
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be positive: " + maxEntries);
        }
    }
}
