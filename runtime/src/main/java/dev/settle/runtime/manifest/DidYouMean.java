package dev.settle.runtime.manifest;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/** Finds the valid spelling a person most likely meant, by edit distance, ignoring case. */
final class DidYouMean {
    private DidYouMean() {}

    /**
     * The candidate closest to {@code given}, when it is close enough to be a slip rather than a different word:
     * at most a third of the given length away (and at least one edit is always tolerated).
     */
    static Optional<String> closest(String given, Collection<String> candidates) {
        String lower = given.toLowerCase(Locale.ROOT);
        int tolerance = Math.max(1, Math.min(3, given.length() / 3));
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : candidates) {
            int distance = distance(lower, candidate.toLowerCase(Locale.ROOT));
            if (distance < bestDistance) {
                best = candidate;
                bestDistance = distance;
            }
        }
        return bestDistance <= tolerance ? Optional.ofNullable(best) : Optional.empty();
    }

    /** {@code "; did you mean 'x'?"}, or nothing. */
    static String hint(String given, Collection<String> candidates) {
        return closest(given, candidates)
                .map(match -> "; did you mean '" + match + "'?")
                .orElse("");
    }

    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
