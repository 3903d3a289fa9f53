package dev.settle.runtime.live;

import java.time.Instant;
import java.util.Objects;

/**
 * What is kept of a generation: enough to show it and to run it again.
 *
 * @param number counts up per subscription, across restarts
 * @param sha256 of the JAR (of a folder's JARs, for the manifest's {@code jar:} folder), lower-case hex
 * @param handler the handler's class name
 * @param source where the code came from
 * @param activatedAt when it last became the running generation
 */
public record GenerationRecord(int number, String sha256, String handler, Source source, Instant activatedAt) {
    /** Where a generation's code came from. */
    public enum Source {
        /** The manifest's {@code jar:}, read from where the manifest says. */
        MANIFEST,
        /** Uploaded through the admin API, kept in the data folder. */
        UPLOAD;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public GenerationRecord {
        Objects.requireNonNull(sha256, "sha256");
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(activatedAt, "activatedAt");
    }

    GenerationRecord activated(Instant at) {
        return new GenerationRecord(number, sha256, handler, source, at);
    }

    /** Whether this is the manifest's code {@code sha256} with handler {@code handler}. */
    boolean isManifestCode(String sha256, String handler) {
        return source == Source.MANIFEST && this.sha256.equals(sha256) && this.handler.equals(handler);
    }

    String shortSha() {
        return sha256.substring(0, Math.min(12, sha256.length()));
    }
}
