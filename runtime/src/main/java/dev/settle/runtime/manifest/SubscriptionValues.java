package dev.settle.runtime.manifest;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * The values of a subscription entry that are checked beyond their type: its name (unique in the manifest), topic
 * names and patterns, class names, its JAR (on disk or a Pulsar package) and its config.
 */
final class SubscriptionValues {
    private static final Pattern CLASS_NAME =
            Pattern.compile("(\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*\\.)*"
                    + "\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*");

    private final NodeReader reader;
    private final Path folder;
    /** Names seen so far in this manifest, with the path of the subscription that used each first. */
    private final Map<String, String> names = new HashMap<>();
    /** False when a {@code jar} is a path on another machine (validate --skip-jar-check): not looked for here. */
    private final boolean jarsMustExist;

    private final Path packageCache;
    private final boolean canFetchPackages;
    /** The package the last {@code jar} read names, if it names one. */
    private Optional<PackageRef> fromPackage = Optional.empty();

    SubscriptionValues(
            NodeReader reader, Path folder, boolean jarsMustExist, Path packageCache, boolean canFetchPackages) {
        this.reader = reader;
        this.folder = folder;
        this.jarsMustExist = jarsMustExist;
        this.packageCache = packageCache;
        this.canFetchPackages = canFetchPackages;
    }

    /** The package the {@code jar} read last names, if it names one. */
    Optional<PackageRef> lastPackage() {
        return fromPackage;
    }

    /** Names label consumers and metrics, so a second subscription of the same name is refused. */
    Optional<String> name(Node node, String path, String subscriptionPath) {
        Optional<String> name = reader.nonBlank(node, path);
        name.ifPresent(text -> {
            String first = names.putIfAbsent(text, subscriptionPath);
            if (first != null) {
                reader.problem(
                        node,
                        path,
                        "'" + text + "' is already the name of " + first + "; subscription names"
                                + " must be unique in a manifest (they label the metrics of each subscription)");
            }
        });
        return name;
    }

    List<TopicName> topics(Node node, String path) {
        List<TopicName> topics = new ArrayList<>();
        Optional<List<Node>> elements = reader.sequence(node, path);
        if (elements.isEmpty()) {
            return topics;
        }
        if (elements.get().isEmpty()) {
            reader.problem(node, path, "must name at least one topic");
        }
        for (int i = 0; i < elements.get().size(); i++) {
            Node element = elements.get().get(i);
            String elementPath = path + "[" + i + "]";
            Optional<TopicName> topic =
                    reader.nonBlank(element, elementPath).flatMap(text -> topic(element, elementPath, text));
            if (topic.isPresent() && topics.contains(topic.get())) {
                reader.problem(element, elementPath, "'" + topic.get() + "' is listed twice; list it once");
            } else {
                topic.ifPresent(topics::add);
            }
        }
        return topics;
    }

    Optional<TopicName> topic(Node node, String path, String text) {
        try {
            return Optional.of(TopicName.parse(text.strip()));
        } catch (IllegalArgumentException e) {
            reader.problem(node, path, e.getMessage());
            return Optional.empty();
        }
    }

    /**
     * Pulsar watches the one namespace a pattern names, so the pattern must be fully qualified with a literal
     * tenant and namespace; only the topic's own name is a regular expression.
     */
    Optional<Pattern> topicsPattern(Node node, String path) {
        return reader.nonBlank(node, path).map(String::strip).flatMap(text -> {
            String[] parts = text.split("/", -1);
            boolean qualified =
                    (text.startsWith("persistent://") || text.startsWith("non-persistent://")) && parts.length >= 5;
            if (!qualified) {
                reader.problem(
                        node,
                        path,
                        "must be fully qualified, such as 'persistent://public/default/orders-.*'," + " was '" + text
                                + "': Pulsar watches the one namespace the pattern names");
                return Optional.empty();
            }
            try {
                TopicName.parse(parts[0] + "//" + parts[2] + "/" + parts[3] + "/x");
            } catch (IllegalArgumentException e) {
                reader.problem(
                        node,
                        path,
                        "must name its tenant and namespace literally, such as"
                                + " 'persistent://public/default/orders-.*', was '" + text + "'");
                return Optional.empty();
            }
            try {
                return Optional.of(Pattern.compile(text));
            } catch (PatternSyntaxException e) {
                reader.problem(
                        node,
                        path,
                        "is not a valid regular expression, was '" + text + "': " + e.getDescription() + " near index "
                                + e.getIndex());
                return Optional.empty();
            }
        });
    }

    Optional<TopicName> deadLetterTopic(Node node, String path) {
        return reader.nonBlank(node, path)
                .flatMap(text -> topic(node, path, text))
                .flatMap(topic -> {
                    if (!topic.persistent()) {
                        reader.problem(
                                node,
                                path,
                                "must be a persistent topic, was '" + topic + "': a non-persistent topic"
                                        + " keeps no messages, so dead letters would be lost");
                        return Optional.empty();
                    }
                    return Optional.of(topic);
                });
    }

    Optional<String> handler(Node node, String path) {
        return reader.nonBlank(node, path).map(String::strip).flatMap(text -> {
            if (!CLASS_NAME.matcher(text).matches()) {
                reader.problem(
                        node, path, "must be a class name such as 'com.acme.orders.OrderHandler', was '" + text + "'");
                return Optional.empty();
            }
            return Optional.of(text);
        });
    }

    Optional<Path> jar(Node node, String path) {
        fromPackage = Optional.empty();
        return reader.nonBlank(node, path).flatMap(text -> {
            if (PackageRef.isPackage(text)) {
                return packageJar(node, path, text);
            }
            Path jar = folder.resolve(text.strip()).normalize();
            if (!jarsMustExist) {
                return Optional.of(jar);
            }
            if (!Files.exists(jar)) {
                reader.problem(
                        node,
                        path,
                        "no file or folder at '" + jar + "', was '" + text
                                + "'; the path is relative to the manifest's folder");
                return Optional.empty();
            }
            if (!Files.isRegularFile(jar) && !Files.isDirectory(jar)) {
                // Opening a named pipe as a JAR blocks until something writes to it: validate would hang.
                reader.problem(
                        node,
                        path,
                        "must be a JAR file or a folder of JARs, '" + jar + "' is " + FileKind.of(jar)
                                + "; point jar at the JAR your build produces");
                return Optional.empty();
            }
            return Optional.of(jar);
        });
    }

    /** Where a package's JAR is cached: the cache, then its type, tenant, namespace, name, and version. */
    Optional<Path> packageJar(Node node, String path, String text) {
        Optional<PackageRef> parsed = PackageRef.parse(text);
        if (parsed.isEmpty()) {
            reader.problem(
                    node,
                    path,
                    "'" + text.strip() + "' is not a package reference; write function://tenant/namespace/name@version"
                            + " (or sink://, source://), each part letters, digits, '.', '_' or '-'");
            return Optional.empty();
        }
        if (!canFetchPackages) {
            reader.problem(
                    node,
                    path,
                    "names the Pulsar package " + parsed.get() + ", but pulsar.adminUrl is not set; set it to the"
                            + " cluster's web service URL (such as http://pulsar-broker:8080), where packages are"
                            + " fetched from");
            return Optional.empty();
        }
        PackageRef ref = parsed.get();
        fromPackage = parsed;
        return Optional.of(packageCache
                .resolve(ref.type())
                .resolve(ref.tenant())
                .resolve(ref.namespace())
                .resolve(ref.name())
                .resolve(ref.version() + ".jar"));
    }

    Map<String, String> config(Node node, String path) {
        Map<String, String> config = new LinkedHashMap<>();
        reader.mapping(node, path, List.of(), List.of())
                .ifPresent(mapping -> mapping.entries().forEach((key, value) -> {
                    String keyPath = mapping.path(key);
                    if (!(value instanceof ScalarNode)) {
                        reader.problem(
                                value,
                                keyPath,
                                "must be a string, was " + NodeReader.describe(value)
                                        + "; config values are strings (numbers and true/false are taken as written)");
                        return;
                    }
                    reader.text(value, keyPath).ifPresent(text -> config.put(key, text));
                }));
        return config;
    }
}
