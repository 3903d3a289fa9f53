package dev.settle.runtime.isolation;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A JAR that goes past its {@link JarLimits}: an entry that inflates to more than the limit, or more entries than
 * the limit. {@link HandlerLoadException#jarLimit} turns it into the message a person reads.
 */
final class JarLimitException extends IOException {

    private static final long serialVersionUID = 1L;

    private final transient Path jar;
    private final String entry;
    private final long limit;
    private final long claimed;

    private JarLimitException(Path jar, String entry, long limit, long claimed) {
        super(jar
                + (entry == null
                        ? " has " + claimed + " entries, more than " + limit
                        : ": entry " + entry + " inflates to more than " + limit + " bytes"));
        this.jar = jar;
        this.entry = entry;
        this.limit = limit;
        this.claimed = claimed;
    }

    /** @param claimed the uncompressed size the zip header gives, or -1 when it gives none */
    static JarLimitException entryTooLarge(Path jar, String entry, long limit, long claimed) {
        return new JarLimitException(jar, entry, limit, claimed);
    }

    static JarLimitException tooManyEntries(Path jar, int entries, int limit) {
        return new JarLimitException(jar, null, limit, entries);
    }

    Path jar() {
        return jar;
    }

    /** The entry that inflates too far; empty when the JAR has too many entries. */
    Optional<String> entry() {
        return Optional.ofNullable(entry);
    }

    long limit() {
        return limit;
    }

    /** The size the zip header claims for the entry (-1 for none), or the JAR's entry count. */
    long claimed() {
        return claimed;
    }
}
