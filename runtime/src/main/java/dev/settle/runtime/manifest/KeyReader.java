package dev.settle.runtime.manifest;

import dev.settle.runtime.manifest.ManifestKey.Bound;
import dev.settle.runtime.manifest.ManifestKey.Level;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads the keys of one mapping as their rows in {@link ManifestKeys} say: which keys the mapping accepts and
 * requires, and each value's type, bounds, allowed values and default. A value that is wrong is recorded as a problem
 * and read as empty; a key left out is read as empty too, and its default is the caller's to take ({@code ...OrDefault}
 * methods take it for them).
 */
final class KeyReader {
    private final NodeReader reader;
    private final Level level;

    KeyReader(NodeReader reader, Level level) {
        this.reader = reader;
        this.level = level;
    }

    /** The mapping at {@code path}, its keys checked against the table (unknown, duplicate, required). */
    Optional<NodeReader.Mapping> mapping(Node node, String path) {
        return reader.mapping(node, path, level.names(), level.required());
    }

    ManifestKey key(String name) {
        return ManifestKeys.key(level, name);
    }

    /** A whole number within the row's bounds. */
    OptionalInt integer(NodeReader.Mapping m, String name) {
        Optional<Node> node = m.get(name);
        if (node.isEmpty()) {
            return OptionalInt.empty();
        }
        ManifestKey key = key(name);
        String path = m.path(name);
        Optional<NodeReader.WholeNumber> number = reader.wholeNumber(node.get(), path);
        if (number.isEmpty()) {
            return OptionalInt.empty();
        }
        int value = number.get().value();
        // Below the minimum quotes the value as written; above the maximum, as read.
        if (key.min().isPresent() && value < Integer.parseInt(key.min().get().limit())) {
            reader.problem(
                    node.get(),
                    path,
                    key.min().get().problem().formatted(number.get().written()));
            return OptionalInt.empty();
        }
        if (key.max().isPresent() && value > Integer.parseInt(key.max().get().limit())) {
            reader.problem(node.get(), path, key.max().get().problem().formatted(value));
            return OptionalInt.empty();
        }
        return OptionalInt.of(value);
    }

    /** The whole number written, or the row's default when it is left out or wrong. */
    int integerOrDefault(NodeReader.Mapping m, String name) {
        return integer(m, name).orElse(key(name).intDefault());
    }

    /** A decimal number within the row's bounds; one problem, the minimum's, says what is accepted. */
    Optional<Double> number(NodeReader.Mapping m, String name) {
        ManifestKey key = key(name);
        return m.get(name)
                .flatMap(node -> reader.nonBlank(node, m.path(name))
                        .map(String::strip)
                        .flatMap(text -> {
                            try {
                                double value = Double.parseDouble(text);
                                if (within(value, key.min(), key.max())) {
                                    return Optional.of(value);
                                }
                            } catch (NumberFormatException e) {
                                // reported below with the accepted range
                            }
                            reader.problem(
                                    node,
                                    m.path(name),
                                    key.min()
                                            .or(key::max)
                                            .orElseThrow()
                                            .problem()
                                            .formatted(text));
                            return Optional.empty();
                        }));
    }

    private static boolean within(double value, Optional<Bound> min, Optional<Bound> max) {
        return min.map(bound -> value >= Double.parseDouble(bound.limit())).orElse(true)
                && max.map(bound -> value <= Double.parseDouble(bound.limit())).orElse(true);
    }

    Optional<Boolean> bool(NodeReader.Mapping m, String name) {
        return m.get(name).flatMap(node -> reader.bool(node, m.path(name)));
    }

    boolean boolOrDefault(NodeReader.Mapping m, String name) {
        return bool(m, name).orElse(key(name).booleanDefault());
    }

    /** A duration within the row's bounds; zero only where the row's type allows it. */
    Optional<Duration> duration(NodeReader.Mapping m, String name) {
        ManifestKey key = key(name);
        return m.get(name).flatMap(node -> {
            String path = m.path(name);
            Optional<Duration> read = key.type() == ManifestKey.ValueType.DURATION_OR_ZERO
                    ? reader.durationOrZero(node, path)
                    : reader.duration(node, path);
            return read.filter(value -> {
                if (key.min().isPresent()
                        && value.compareTo(DurationText.parse(key.min().get().limit())) < 0) {
                    reader.problem(node, path, key.min().get().problem().formatted(DurationText.format(value)));
                    return false;
                }
                if (key.max().isPresent()
                        && value.compareTo(DurationText.parse(key.max().get().limit())) > 0) {
                    reader.problem(node, path, key.max().get().problem().formatted(DurationText.format(value)));
                    return false;
                }
                return true;
            });
        });
    }

    Duration durationOrDefault(NodeReader.Mapping m, String name) {
        return duration(m, name).orElse(key(name).durationDefault());
    }

    /** One of the row's allowed values, spelled exactly; a near miss gets a suggestion. */
    Optional<String> oneOf(NodeReader.Mapping m, String name) {
        return m.get(name)
                .flatMap(node -> reader.oneOf(node, m.path(name), key(name).allowed()));
    }

    /** A size within the type's bounds (1 KiB to 2 GiB). */
    Optional<Long> size(NodeReader.Mapping m, String name) {
        return m.get(name).flatMap(node -> reader.size(node, m.path(name)));
    }
}
