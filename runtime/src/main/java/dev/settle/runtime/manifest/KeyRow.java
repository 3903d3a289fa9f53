package dev.settle.runtime.manifest;

import dev.settle.runtime.manifest.ManifestKey.Bound;
import dev.settle.runtime.manifest.ManifestKey.Level;
import dev.settle.runtime.manifest.ManifestKey.MeaningChange;
import dev.settle.runtime.manifest.ManifestKey.Reload;
import dev.settle.runtime.manifest.ManifestKey.ValueType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A row of {@link ManifestKeys}' table being declared, built into its {@link ManifestKey}; keys of the top-level
 * sections other than subscriptions are refused on reload.
 */
final class KeyRow {
    private final Level level;
    private final String name;
    private final ValueType type;
    private boolean required;
    private Optional<String> defaultValue = Optional.empty();
    private Optional<String> computedDefault = Optional.empty();
    private Optional<Bound> min = Optional.empty();
    private Optional<Bound> max = Optional.empty();
    private List<String> allowed = List.of();
    private String doc = "";
    private final List<MeaningChange> changes = new ArrayList<>();
    private Reload reload;
    private String since = ManifestKeys.FIRST;

    /** Starts the row of {@code name} in the mapping {@code level}. */
    static KeyRow key(Level level, String name, ValueType type) {
        return new KeyRow(level, name, type);
    }

    KeyRow(Level level, String name, ValueType type) {
        this.level = level;
        this.name = name;
        this.type = type;
        this.reload = level.path().startsWith("subscriptions[]") ? Reload.RESTARTS_SUBSCRIPTION : Reload.REFUSED;
    }

    KeyRow required() {
        required = true;
        return this;
    }

    KeyRow byDefault(String value) {
        defaultValue = Optional.of(value);
        return this;
    }

    KeyRow computed(String description) {
        computedDefault = Optional.of(description);
        return this;
    }

    KeyRow atLeast(int limit) {
        return atLeast(limit, "");
    }

    /** The reader's usual "must be at least N, was 'x'", then {@code why}. */
    KeyRow atLeast(int limit, String why) {
        return atLeast(String.valueOf(limit), "must be at least " + limit + ", was '%s'" + why);
    }

    KeyRow atLeast(String limit, String problem) {
        min = Optional.of(new Bound(limit, problem));
        return this;
    }

    KeyRow atMost(int limit, String problem) {
        return atMost(String.valueOf(limit), problem);
    }

    KeyRow atMost(String limit, String problem) {
        max = Optional.of(new Bound(limit, problem));
        return this;
    }

    KeyRow allowed(String... values) {
        return allowed(List.of(values));
    }

    KeyRow allowed(List<String> values) {
        allowed = values;
        return this;
    }

    KeyRow doc(String text) {
        doc = text;
        return this;
    }

    KeyRow reload(Reload what) {
        reload = what;
        return this;
    }

    /** The version that first reads the key, when it is not the first one. */
    @SuppressWarnings("unused") // every key so far came with the first version
    KeyRow since(String version) {
        since = version;
        return this;
    }

    /** A version that changed what the key means: a manifest written before it means something else. */
    KeyRow changed(String version, String what) {
        changes.add(new MeaningChange(version, what));
        return this;
    }

    ManifestKey build() {
        return new ManifestKey(
                level,
                name,
                type,
                required,
                defaultValue,
                computedDefault,
                min,
                max,
                allowed,
                doc,
                since,
                changes,
                reload);
    }
}
