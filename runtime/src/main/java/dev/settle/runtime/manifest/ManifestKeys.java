package dev.settle.runtime.manifest;

import dev.settle.runtime.manifest.ManifestKey.Level;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Every key of the manifest, one declaration each, in the order problems list them ("Valid keys here: ..."). The
 * readers take from it which keys a mapping accepts and requires, each key's type, bounds, allowed values and default;
 * the rules across keys stay beside the readers ({@code SubscriptionRules}). {@code ManifestKeysAgreementTest} holds
 * {@code settle-manifest.schema.json} and {@code docs/manifest.md}'s tables to it, so adding a key is its row (in
 * {@link ProcessKeys} or {@link SubscriptionKeys}, one table), the code that uses it, and its tests.
 */
final class ManifestKeys {
    /**
     * The version of every key below so far (none has been released yet: the build is 0.1.0-SNAPSHOT); a key added
     * after a release says its own with {@code since}.
     */
    static final String FIRST = "0.1.0";

    /** The process's rows, then a subscription's: one table, in the order problems list the keys. */
    private static final List<ManifestKey> ALL = Stream.concat(
                    ProcessKeys.ROWS.stream(), SubscriptionKeys.ROWS.stream())
            .map(KeyRow::build)
            .toList();

    private static final Map<Level, List<ManifestKey>> BY_LEVEL = byLevel();

    private ManifestKeys() {}

    /** Every key, in table order. */
    static List<ManifestKey> all() {
        return ALL;
    }

    /** The keys of one mapping, in table order. */
    static List<ManifestKey> at(Level level) {
        return BY_LEVEL.getOrDefault(level, List.of());
    }

    /** The row of a key, which must be in the table (a missing one is a mistake in the reader). */
    static ManifestKey key(Level level, String name) {
        return at(level).stream()
                .filter(key -> key.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no key " + name + " at " + level + " in the table"));
    }

    private static Map<Level, List<ManifestKey>> byLevel() {
        Map<Level, List<ManifestKey>> levels = new EnumMap<>(Level.class);
        for (ManifestKey key : ALL) {
            levels.computeIfAbsent(key.level(), level -> new ArrayList<>()).add(key);
        }
        levels.replaceAll((level, keys) -> List.copyOf(keys));
        return levels;
    }
}
