package dev.settle.runtime.manifest;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Reads the keys of a subscription entry that only a Pulsar Function reads ({@code output}'s topic, {@code
 * outputSchema}, {@code secrets}, the SerDes, {@code state}, the instances and {@code windowConfig}).
 */
final class FunctionSettingsReader {
    private static final Pattern ENVIRONMENT_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final NodeReader reader;
    private final SubscriptionValues values;
    private final KeyReader subscriptionKeys;
    private final KeyReader windowKeys;

    FunctionSettingsReader(NodeReader reader, SubscriptionValues values) {
        this.reader = reader;
        this.values = values;
        this.subscriptionKeys = new KeyReader(reader, ManifestKey.Level.SUBSCRIPTION);
        this.windowKeys = new KeyReader(reader, ManifestKey.Level.WINDOW);
    }

    FunctionSettings read(NodeReader.Mapping s, List<TopicName> topics, String subscription) {
        // output: <topic>, or a mapping of the topic and the producer settings (read by outputOptions).
        Optional<Node> outputTopic = s.get("output")
                .flatMap(value -> value instanceof MappingNode
                        ? Optional.ofNullable(((MappingNode) value)
                                .getValue().stream()
                                        .filter(tuple -> tuple.getKeyNode() instanceof ScalarNode key
                                                && key.getValue().equals("topic"))
                                        .findFirst()
                                        .map(tuple -> tuple.getValueNode())
                                        .orElse(null))
                        : Optional.of(value));
        String outputPath =
                s.get("output").orElse(null) instanceof MappingNode ? s.path("output") + ".topic" : s.path("output");
        Optional<String> output = outputTopic.flatMap(value -> reader.nonBlank(value, outputPath)
                .flatMap(text -> values.topic(value, outputPath, text))
                .flatMap(topic -> {
                    if (topics.contains(topic)) {
                        reader.problem(
                                value,
                                outputPath,
                                "'" + topic + "' is also consumed by this subscription, so every output"
                                        + " would be handled again; publish to a topic of its own");
                        return Optional.empty();
                    }
                    return Optional.of(topic.toString());
                }));
        Optional<SchemaKind> outputSchema =
                subscriptionKeys.oneOf(s, "outputSchema").flatMap(SchemaKind::fromManifestName);
        if (s.has("outputSchema") && !s.has("output")) {
            reader.problem(
                    s.get("outputSchema").get(),
                    s.path("outputSchema"),
                    "is set without output, so it has no effect; add output (the topic return values go to), or"
                            + " remove outputSchema");
        }
        Map<String, String> secrets = new LinkedHashMap<>();
        s.get("secrets")
                .ifPresent(node -> reader.mapping(node, s.path("secrets"), List.of(), List.of())
                        .ifPresent(mapping -> mapping.entries().forEach((name, value) -> {
                            String path = mapping.path(name);
                            reader.nonBlank(value, path).map(String::strip).ifPresent(variable -> {
                                if (!ENVIRONMENT_NAME.matcher(variable).matches()) {
                                    reader.problem(
                                            value,
                                            path,
                                            "must be the name of the environment variable that holds the secret, such as"
                                                    + " API_KEY, was '" + variable + "'");
                                } else {
                                    secrets.put(name, variable);
                                }
                            });
                        })));
        Map<String, String> inputSerdes = inputSerdes(s, topics);
        Optional<String> outputSerde =
                s.get("outputSerde").flatMap(value -> values.handler(value, s.path("outputSerde")));
        if (s.has("outputSerde") && s.has("outputSchema")) {
            reader.problem(
                    s.get("outputSerde").get(),
                    s.path("outputSerde"),
                    "is set together with outputSchema; serialise return values with a SerDe class (outputSerde)"
                            + " or a schema (outputSchema), not both");
        } else if (s.has("outputSerde") && !s.has("output")) {
            reader.problem(
                    s.get("outputSerde").get(),
                    s.path("outputSerde"),
                    "is set without output, so it has no effect; add output (the topic return values go to), or"
                            + " remove outputSerde");
        }
        boolean inputProperties = subscriptionKeys.boolOrDefault(s, "inputProperties");
        Optional<String> state = s.get("state").flatMap(value -> state(value, s.path("state"), topics, subscription));
        int numInstances = subscriptionKeys.integerOrDefault(s, "numInstances");
        int instanceId = subscriptionKeys.integerOrDefault(s, "instanceId");
        if (instanceId >= numInstances && s.has("instanceId")) {
            reader.problem(
                    s.get("instanceId").get(),
                    s.path("instanceId"),
                    "must be less than numInstances (" + numInstances + "), was '" + instanceId + "'; instances are"
                            + " numbered from 0, as Pulsar Functions number them");
        }
        Optional<WindowSettings> window =
                s.get("windowConfig").flatMap(value -> windowConfig(value, s.path("windowConfig")));
        return new FunctionSettings(
                output,
                outputSchema,
                secrets,
                inputSerdes,
                outputSerde,
                inputProperties,
                state,
                instanceId,
                numInstances,
                window);
    }

    /**
     * {@code windowConfig}: a count window ({@code windowLengthCount}, {@code slidingIntervalCount}) or a time window
     * ({@code windowLengthDurationMs}, {@code slidingIntervalDurationMs}), as Pulsar Functions' {@code WindowConfig};
     * no sliding interval makes it tumbling. The event-time keys are refused, each saying why.
     */
    private Optional<WindowSettings> windowConfig(Node node, String path) {
        Optional<NodeReader.Mapping> found = windowKeys.mapping(node, path);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping w = found.get();
        int before = reader.problemCount();
        for (ManifestKey refused : ManifestKeys.at(ManifestKey.Level.WINDOW)) {
            if (refused.type() == ManifestKey.ValueType.REFUSED) {
                w.get(refused.name()).ifPresent(value -> reader.problem(value, w.path(refused.name()), refused.doc()));
            }
        }
        OptionalInt lengthCount = windowKeys.integer(w, "windowLengthCount");
        OptionalInt lengthMs = windowKeys.integer(w, "windowLengthDurationMs");
        OptionalInt slidingCount = windowKeys.integer(w, "slidingIntervalCount");
        OptionalInt slidingMs = windowKeys.integer(w, "slidingIntervalDurationMs");
        if (w.has("windowLengthCount") == w.has("windowLengthDurationMs")) {
            reader.problem(
                    node,
                    path,
                    "needs exactly one of windowLengthCount (messages) and windowLengthDurationMs (milliseconds), as"
                            + " Pulsar Functions does");
        } else if (w.has("windowLengthCount") && w.has("slidingIntervalDurationMs")
                || w.has("windowLengthDurationMs") && w.has("slidingIntervalCount")) {
            String sliding = w.has("slidingIntervalCount") ? "slidingIntervalCount" : "slidingIntervalDurationMs";
            reader.problem(
                    w.get(sliding).get(),
                    w.path(sliding),
                    "measures the window differently from its length; slide a count window with"
                            + " slidingIntervalCount and a time window with slidingIntervalDurationMs");
        }
        if (reader.problemCount() != before) {
            return Optional.empty();
        }
        if (lengthCount.isPresent()) {
            int length = lengthCount.getAsInt();
            return Optional.of(new WindowSettings(true, length, slidingCount.orElse(length)));
        }
        int length = lengthMs.getAsInt();
        return Optional.of(new WindowSettings(false, length, slidingMs.orElse(length)));
    }

    /**
     * {@code inputSerdes}: a SerDe class for each consumed topic, as {@code --custom-serde-inputs}. Every topic needs
     * one, because one consumer reads them all with one schema (BYTES, decoded by the SerDe).
     */
    private Map<String, String> inputSerdes(NodeReader.Mapping s, List<TopicName> topics) {
        Map<String, String> serdes = new LinkedHashMap<>();
        Optional<Node> node = s.get("inputSerdes");
        if (node.isEmpty()) {
            return serdes;
        }
        String path = s.path("inputSerdes");
        if (s.has("topicsPattern")) {
            reader.problem(
                    node.get(),
                    path,
                    "is set with topicsPattern; a SerDe is named per topic, so list the topics under topics");
            return serdes;
        }
        if (s.has("schema")) {
            reader.problem(
                    node.get(),
                    path,
                    "is set together with schema; decode inputs with SerDe classes (inputSerdes) or a schema"
                            + " (schema), not both");
            return serdes;
        }
        List<String> consumed = topics.stream().map(TopicName::toString).toList();
        reader.mapping(node.get(), path, List.of(), List.of())
                .ifPresent(mapping -> mapping.entries().forEach((name, value) -> {
                    String entryPath = mapping.path(name);
                    Optional<String> topic =
                            values.topic(value, entryPath, name).map(TopicName::toString);
                    Optional<String> serde = values.handler(value, entryPath);
                    if (topic.isPresent() && !consumed.contains(topic.get())) {
                        reader.problem(
                                value,
                                entryPath,
                                "names '" + topic.get() + "', which this subscription does not consume; the topics"
                                        + " are " + String.join(", ", consumed));
                    } else if (topic.isPresent() && serde.isPresent()) {
                        serdes.put(topic.get(), serde.get());
                    }
                }));
        if (!serdes.isEmpty()) {
            for (String topic : consumed) {
                if (!serdes.containsKey(topic)) {
                    reader.problem(
                            node.get(),
                            path,
                            "has no SerDe for '" + topic + "', which this subscription consumes; name one for every"
                                    + " topic (one consumer reads them all as bytes for the SerDes)");
                }
            }
        }
        return serdes;
    }

    /**
     * {@code state}: {@code true} for the topic {@code <tenant>/<namespace>/<subscription>-state} beside the first
     * consumed topic, or a topic's name; {@code false} for none.
     */
    private Optional<String> state(Node node, String path, List<TopicName> topics, String name) {
        return reader.nonBlank(node, path).map(String::strip).flatMap(text -> {
            if (text.equals("false")) {
                return Optional.empty();
            }
            if (text.equals("true")) {
                if (topics.isEmpty()) {
                    reader.problem(
                            node,
                            path,
                            "is true with no topics to name the state topic after; name the topic, such as"
                                    + " 'persistent://public/default/word-count-state'");
                    return Optional.empty();
                }
                TopicName first = topics.get(0);
                return Optional.of(new TopicName(first.persistent(), first.tenant(), first.namespace(), name + "-state")
                        .toString());
            }
            return values.topic(node, path, text).map(TopicName::toString);
        });
    }
}
