package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads typed values out of a composed YAML node tree, collecting a {@link Problem} with the node's line and
 * column for everything that is wrong instead of stopping at the first. Every value read is remembered with its
 * location, so that later checks (such as finding the handler in its JAR) can point at it too.
 *
 * <p>The walk is driven by what the manifest expects at each place, never by the document's shape, so an
 * alias-heavy document costs no more than what the manifest reads; {@link #budget} bounds even that.
 */
final class NodeReader {
    private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*(B|KiB|MiB|GiB)?");

    /** Nodes visited, including through aliases and merge keys, before the document is refused as too large. */
    private static final int NODE_BUDGET = 100_000;

    private final Path file;
    private final Map<String, String> environment;
    // Set, not list: an anchored mapping merged into several places would otherwise report its problems once per use.
    private final Set<Problem> problems = new LinkedHashSet<>();
    private final Map<String, Location> locations = new LinkedHashMap<>();
    private final Set<String> environmentPaths = new LinkedHashSet<>();
    /** For each value taken from the environment: what it became, and what the manifest wrote. */
    private final Map<String, Substitution> substitutions = new LinkedHashMap<>();

    private int budget = NODE_BUDGET;

    NodeReader(Path file, Map<String, String> environment) {
        this.file = file;
        this.environment = environment;
    }

    /** A mapping read by {@link #mapping}: its entries in document order, merge keys resolved. */
    record Mapping(Node node, String path, Map<String, Node> entries) {
        Optional<Node> get(String key) {
            return Optional.ofNullable(entries.get(key));
        }

        boolean has(String key) {
            return entries.containsKey(key);
        }

        String path(String key) {
            return path.isEmpty() ? key : path + "." + key;
        }
    }

    Location locate(Node node) {
        Mark mark = node.getStartMark();
        return mark == null ? new Location(file, 1, 1) : new Location(file, mark.getLine() + 1, mark.getColumn() + 1);
    }

    void problem(Node node, String path, String message) {
        problem(locate(node), path, message);
    }

    void problem(Location location, String path, String message) {
        problems.add(new Problem(location, path.isEmpty() ? "(document)" : path, hideEnvironment(path, message)));
    }

    /**
     * A value from the environment may be a secret put in the wrong place, and problems end up in logs: such a
     * value is quoted as the manifest wrote it ({@code '${API_KEY}'}), never as what it became.
     */
    private String hideEnvironment(String path, String message) {
        Substitution substitution = substitutions.get(path);
        if (substitution == null || substitution.value().isEmpty()) {
            return message;
        }
        String hidden = message.replace(
                "'" + substitution.value() + "'", "'" + substitution.written() + "' (its value is not shown)");
        // Short values (a port, a count) are no secret, and replacing them everywhere would garble the message.
        return substitution.value().length() < 6 ? hidden : hidden.replace(substitution.value(), "[REDACTED]");
    }

    private record Substitution(String value, String written) {}

    int problemCount() {
        return problems.size();
    }

    /** The problems in the order they appear in the file, so that a reader can fix them top to bottom. */
    List<Problem> problems() {
        return problems.stream()
                .sorted(Comparator.comparingInt((Problem p) -> p.location().line())
                        .thenComparingInt(p -> p.location().column()))
                .toList();
    }

    Map<String, Location> locations() {
        return Collections.unmodifiableMap(locations);
    }

    Set<String> environmentPaths() {
        return Collections.unmodifiableSet(environmentPaths);
    }

    void remember(String path, Node node) {
        locations.putIfAbsent(path, locate(node));
    }

    /**
     * The entries of a mapping, after checking that every key is allowed ({@code allowed} empty: any key) and
     * written once, and that every required key is there.
     */
    Optional<Mapping> mapping(Node node, String path, List<String> allowed, List<String> required) {
        if (!visit(node, path)) {
            return Optional.empty();
        }
        if (!(node instanceof MappingNode)) {
            problem(node, path, "must be a mapping of keys to values, was " + describe(node));
            return Optional.empty();
        }
        remember(path, node);
        Map<String, Node> entries = new LinkedHashMap<>();
        Map<String, Node> keyNodes = new LinkedHashMap<>();
        collect(
                (MappingNode) node,
                path,
                allowed,
                entries,
                keyNodes,
                true,
                Collections.newSetFromMap(new IdentityHashMap<>()));
        Mapping mapping = new Mapping(node, path, entries);
        for (String key : required) {
            // A misspelt key ('subscription:') already has its line, its column and "did you mean 'subscriptions'?":
            // a second problem at the mapping's first line, printed before it, pointed at the wrong place.
            if (!entries.containsKey(key) && !misspelt(node, key, allowed)) {
                problem(node, mapping.path(key), "is required; add '" + key + ":' here");
            }
        }
        return Optional.of(mapping);
    }

    /** Whether one of the mapping's own keys is not allowed and is a near miss of {@code key}. */
    private static boolean misspelt(Node node, String key, List<String> allowed) {
        return ((MappingNode) node)
                .getValue().stream()
                        .map(NodeTuple::getKeyNode)
                        .filter(ScalarNode.class::isInstance)
                        .map(keyNode -> ((ScalarNode) keyNode).getValue())
                        .anyMatch(given -> !allowed.contains(given)
                                && DidYouMean.closest(given, allowed).equals(Optional.of(key)));
    }

    private void collect(
            MappingNode node,
            String path,
            List<String> allowed,
            Map<String, Node> entries,
            Map<String, Node> keyNodes,
            boolean explicit,
            Set<Node> merging) {
        List<Node> merges = new ArrayList<>();
        Map<String, Node> ownKeys = new LinkedHashMap<>();
        for (NodeTuple tuple : node.getValue()) {
            Node keyNode = tuple.getKeyNode();
            if (!visit(keyNode, path)) {
                continue;
            }
            if (keyNode.getTag().equals(Tag.MERGE)) {
                merges.add(tuple.getValueNode());
                continue;
            }
            if (!(keyNode instanceof ScalarNode) || keyNode.getTag().equals(Tag.NULL)) {
                problem(keyNode, path, "keys must be plain names, was " + describe(keyNode));
                continue;
            }
            String key = ((ScalarNode) keyNode).getValue();
            String keyPath = path.isEmpty() ? key : path + "." + key;
            Node first = ownKeys.putIfAbsent(key, keyNode);
            if (first != null) {
                Location at = locate(first);
                problem(
                        keyNode,
                        keyPath,
                        "duplicate key; it was first written at line " + at.line() + ", column " + at.column()
                                + ". Keep one of them");
                continue;
            }
            if (!allowed.isEmpty() && !allowed.contains(key) && !(path.isEmpty() && key.startsWith("x-"))) {
                String hint = DidYouMean.hint(key, allowed);
                problem(
                        keyNode,
                        keyPath,
                        "unknown key" + (hint.isEmpty() ? "; valid keys here: " : hint + " Valid keys here: ")
                                + String.join(", ", allowed));
                continue;
            }
            // Explicit keys win over merged ones; among merges, the first one to give a key wins (YAML merge spec).
            if (explicit || !entries.containsKey(key)) {
                entries.put(key, tuple.getValueNode());
                keyNodes.put(key, keyNode);
            }
        }
        for (Node merge : merges) {
            List<Node> sources = merge instanceof SequenceNode sequence ? sequence.getValue() : List.of(merge);
            for (Node source : sources) {
                if (!(source instanceof MappingNode) || !visit(source, path)) {
                    problem(
                            source,
                            path + (path.isEmpty() ? "" : ".") + "<<",
                            "a merge key ('<<') must name a mapping or a list of mappings, was " + describe(source));
                    continue;
                }
                if (!merging.add(source)) {
                    problem(source, path, "a merge key ('<<') refers to the mapping it is part of");
                    continue;
                }
                collect((MappingNode) source, path, allowed, entries, keyNodes, false, merging);
                merging.remove(source);
            }
        }
    }

    /** Counts a visit against the budget and refuses custom tags; false when the node must not be read. */
    private boolean visit(Node node, String path) {
        if (--budget < 0) {
            if (budget == -1) {
                problem(
                        node,
                        path,
                        "the document is too large once its aliases are expanded (more than " + NODE_BUDGET
                                + " values); write it without so many aliases");
            }
            return false;
        }
        if (!node.getTag().startsWith(Tag.PREFIX)) {
            problem(
                    node,
                    path,
                    "custom YAML tags are not supported, was '" + node.getTag().getValue() + "'; remove the tag");
            return false;
        }
        return true;
    }

    /** The elements of a list. */
    Optional<List<Node>> sequence(Node node, String path) {
        if (!visit(node, path)) {
            return Optional.empty();
        }
        if (!(node instanceof SequenceNode)) {
            problem(
                    node,
                    path,
                    "must be a list, was " + describe(node)
                            + (node instanceof ScalarNode
                                    ? "; write [" + ((ScalarNode) node).getValue() + "] for a list of one"
                                    : ""));
            return Optional.empty();
        }
        remember(path, node);
        return Optional.of(((SequenceNode) node).getValue());
    }

    /** A scalar's text, with {@code ${...}} expanded; numbers and booleans are taken as written. */
    Optional<String> text(Node node, String path) {
        if (!visit(node, path)) {
            return Optional.empty();
        }
        if (!(node instanceof ScalarNode)) {
            problem(node, path, "must be a single value, was " + describe(node));
            return Optional.empty();
        }
        if (node.getTag().equals(Tag.NULL)) {
            problem(node, path, "has no value; give one, or remove the key to use the default");
            return Optional.empty();
        }
        remember(path, node);
        EnvironmentSubstitution.Result result =
                EnvironmentSubstitution.apply(((ScalarNode) node).getValue(), environment);
        result.problems().forEach(message -> problem(node, path, message));
        if (result.substituted()) {
            environmentPaths.add(path);
            substitutions.put(path, new Substitution(result.text(), ((ScalarNode) node).getValue()));
        }
        return result.problems().isEmpty() ? Optional.of(result.text()) : Optional.empty();
    }

    /** A non-blank string. */
    Optional<String> nonBlank(Node node, String path) {
        Optional<String> text = text(node, path);
        if (text.isPresent() && text.get().isBlank()) {
            problem(node, path, "must not be empty");
            return Optional.empty();
        }
        return text;
    }

    /** A whole number no smaller than {@code min}. */
    OptionalInt integer(Node node, String path, int min) {
        return integer(node, path, min, "");
    }

    /** A whole number no smaller than {@code min}; {@code why} explains the minimum to the user. */
    OptionalInt integer(Node node, String path, int min, String why) {
        Optional<WholeNumber> number = wholeNumber(node, path);
        if (number.isEmpty()) {
            return OptionalInt.empty();
        }
        if (number.get().value() < min) {
            problem(
                    node,
                    path,
                    "must be at least " + min + ", was '" + number.get().written() + "'" + why);
            return OptionalInt.empty();
        }
        return OptionalInt.of(number.get().value());
    }

    /** A whole number: {@code written} as the manifest has it (a refusal quotes it), {@code value} as read. */
    record WholeNumber(String written, int value) {}

    /** A whole number, its bounds left to the caller. */
    Optional<WholeNumber> wholeNumber(Node node, String path) {
        Optional<String> text = text(node, path);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(
                    new WholeNumber(text.get(), Integer.parseInt(text.get().strip())));
        } catch (NumberFormatException e) {
            problem(node, path, "must be a whole number, was '" + text.get() + "'");
            return Optional.empty();
        }
    }

    /** {@code true} or {@code false}, in any case; YAML 1.1's yes/no/on/off are refused as ambiguous. */
    Optional<Boolean> bool(Node node, String path) {
        Optional<String> text = text(node, path);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        switch (text.get().strip().toLowerCase(Locale.ROOT)) {
            case "true":
                return Optional.of(true);
            case "false":
                return Optional.of(false);
            default:
                problem(node, path, "must be true or false, was '" + text.get() + "'");
                return Optional.empty();
        }
    }

    /** A size: bytes, or with KiB, MiB or GiB; between 1 KiB and 2 GiB. */
    Optional<Long> size(Node node, String path) {
        Optional<String> text = text(node, path);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        Matcher matcher = SIZE.matcher(text.get().strip());
        if (!matcher.matches()) {
            problem(
                    node,
                    path,
                    "must be a size such as '100MiB', '512KiB' or '1GiB' (or bytes, '1048576'), was '" + text.get()
                            + "'");
            return Optional.empty();
        }
        long unit = switch (matcher.group(2) == null ? "B" : matcher.group(2).toUpperCase(Locale.ROOT)) {
            case "KIB" -> 1024L;
            case "MIB" -> 1024L * 1024;
            case "GIB" -> 1024L * 1024 * 1024;
            default -> 1L;
        };
        long bytes;
        try {
            bytes = Math.multiplyExact(Long.parseLong(matcher.group(1)), unit);
        } catch (ArithmeticException | NumberFormatException e) {
            bytes = Long.MAX_VALUE;
        }
        if (bytes < 1024 || bytes > 2L * 1024 * 1024 * 1024) {
            problem(node, path, "must be between 1KiB and 2GiB, was '" + text.get() + "'");
            return Optional.empty();
        }
        return Optional.of(bytes);
    }

    /** A positive duration. */
    Optional<Duration> duration(Node node, String path) {
        Optional<String> text = text(node, path);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(DurationText.parse(text.get()));
        } catch (IllegalArgumentException e) {
            problem(node, path, e.getMessage());
            return Optional.empty();
        }
    }

    /** A duration that may be zero ({@code 0ms}), for a wait that can be left out. */
    Optional<Duration> durationOrZero(Node node, String path) {
        Optional<String> text = text(node, path);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(DurationText.parseZeroOrMore(text.get()));
        } catch (IllegalArgumentException e) {
            problem(node, path, e.getMessage());
            return Optional.empty();
        }
    }

    /** One of {@code names}, spelled exactly; a near miss gets a suggestion. */
    Optional<String> oneOf(Node node, String path, List<String> names) {
        Optional<String> text = text(node, path);
        if (text.isEmpty() || names.contains(text.get())) {
            return text;
        }
        problem(
                node,
                path,
                "must be one of " + String.join(", ", names) + ", was '" + text.get() + "'"
                        + DidYouMean.hint(text.get(), names));
        return Optional.empty();
    }

    static String describe(Node node) {
        if (node instanceof MappingNode) {
            return "a mapping";
        }
        if (node instanceof SequenceNode) {
            return "a list";
        }
        if (node.getTag().equals(Tag.NULL)) {
            return "empty";
        }
        return "'" + ((ScalarNode) node).getValue() + "'";
    }
}
