package dev.settle.runtime.deadletter;

import java.util.Map;
import java.util.Objects;

/**
 * The generation of a subscription's code that holds messages for a fix (docs/dead-letters.md, "Hold for a fix"), as
 * a held copy names it ({@link DeadLetterProperties#HELD_GENERATION}, {@link DeadLetterProperties#HELD_SHA256}).
 *
 * @param generation the generation's number ({@code settle status}'s); 0 when not known
 * @param sha256 its JAR's sha256; empty when not known
 */
public record HeldBy(int generation, String sha256) {
    /** The code before any generation was told: a held copy it writes is re-driven by the first one told. */
    public static final HeldBy UNKNOWN = new HeldBy(0, "");

    public HeldBy {
        Objects.requireNonNull(sha256, "sha256");
    }

    /** The code a held copy names; {@link #UNKNOWN} for what it does not say. */
    static HeldBy of(Map<String, String> held) {
        int generation;
        try {
            generation = Integer.parseInt(held.getOrDefault(DeadLetterProperties.HELD_GENERATION, "0"));
        } catch (NumberFormatException unreadable) {
            generation = 0;
        }
        return new HeldBy(generation, held.getOrDefault(DeadLetterProperties.HELD_SHA256, ""));
    }

    /**
     * Whether messages held by {@code other} wait on under this code (the re-drive's loop guard): the same JAR (its
     * sha256) when both name one, a reload of the same JAR being no fix; otherwise the same generation.
     */
    public boolean sameCode(HeldBy other) {
        if (!sha256.isEmpty() && !other.sha256.isEmpty()) {
            return sha256.equals(other.sha256);
        }
        return generation == other.generation;
    }

    /** The properties a held copy carries for it. */
    public Map<String, String> properties() {
        return Map.of(
                DeadLetterProperties.HELD_GENERATION,
                Integer.toString(generation),
                DeadLetterProperties.HELD_SHA256,
                sha256);
    }

    /** "generation 3 (sha256 03aa7c755e16)", as logs and {@code settle held list} name it. */
    @Override
    public String toString() {
        return "generation " + generation
                + (sha256.isEmpty() ? "" : " (sha256 " + sha256.substring(0, Math.min(12, sha256.length())) + ")");
    }
}
