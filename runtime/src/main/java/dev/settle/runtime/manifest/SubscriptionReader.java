package dev.settle.runtime.manifest;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/** Reads one entry of {@code subscriptions:} and checks the rules that hold within it (docs/design.md, "Refusing to start"). */
final class SubscriptionReader {
    private static final Pattern CLASS_NAME =
            Pattern.compile("(\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*\\.)*"
                    + "\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*");
    private static final List<String> TYPES = Arrays.stream(SubscriptionKind.values())
            .map(SubscriptionKind::manifestName)
            .toList();
    private static final List<String> SCHEMAS =
            Arrays.stream(SchemaKind.values()).map(SchemaKind::manifestName).toList();
    private static final List<String> POSITIONS = List.of("earliest", "latest");
    private static final List<String> GUARANTEES =
            Arrays.stream(Guarantee.values()).map(Guarantee::manifestName).toList();
    private static final String NONE = "none";

    /** Every key of a subscription entry; a test holds {@code settle-manifest.schema.json} to this list. */
    static final List<String> KEYS = List.of(
            "name",
            "topics",
            "topicsPattern",
            "type",
            "handler",
            "jar",
            "schema",
            "ackTimeout",
            "maxAttempts",
            "deadLetterTopic",
            "deadLetterSubscription",
            "deadLetterStackTrace",
            "maxRetryDelay",
            "failureBackoff",
            "concurrency",
            "maxPendingOutputs",
            "receiverQueueSize",
            "initialPosition",
            "handlerTimeout",
            "batchIndexAck",
            "guarantee",
            "commitBatch",
            "config",
            "function",
            "output",
            "outputSchema",
            "secrets",
            "inputSerdes",
            "outputSerde",
            "inputProperties",
            "state",
            "instanceId",
            "numInstances",
            "windowConfig",
            "onException");

    static final List<String> REQUIRED = List.of("name", "jar");
    static final List<String> BACKOFF_KEYS = List.of("initial", "multiplier", "max");
    static final List<String> EXCEPTION_RULE_KEYS = List.of("type", "outcome");
    /** The keys of {@code output:} written as a mapping. */
    static final List<String> OUTPUT_KEYS =
            List.of("topic", "batching", "batchingMaxDelay", "compression", "maxPendingMessages");
    /** The keys of {@code commitBatch:}. */
    static final List<String> COMMIT_BATCH_KEYS = List.of("maxDeliveries", "maxDelay");
    /** Keys that only a {@code function:} reads ({@code output:} of a handler is a mapping without a topic). */
    private static final List<String> FUNCTION_ONLY = List.of(
            "outputSchema",
            "secrets",
            "inputSerdes",
            "outputSerde",
            "inputProperties",
            "state",
            "instanceId",
            "numInstances",
            "windowConfig");
    /** The keys of {@code windowConfig:} Settle reads, as Pulsar Functions' {@code WindowConfig} names them. */
    static final List<String> WINDOW_KEYS =
            List.of("windowLengthCount", "windowLengthDurationMs", "slidingIntervalCount", "slidingIntervalDurationMs");
    /**
     * The keys of Functions' {@code WindowConfig} that Settle refuses, each with why: event-time windows (a
     * timestamp extractor, its watermarks, lag and late data) are not built; the class is the manifest's
     * {@code function:}; the guarantee is always at-least-once.
     */
    static final Map<String, String> WINDOW_REFUSED = Map.of(
            "timestampExtractorClassName",
            "event-time windows are not built: Settle's windows are in processing time (a message falls in the window"
                    + " it is received in); remove it",
            "lateDataTopic",
            "late data needs event time, which Settle's windows do not have (they are in processing time); remove it",
            "maxLagMs",
            "a watermark's lag needs event time, which Settle's windows do not have; remove it",
            "watermarkEmitIntervalMs",
            "watermarks need event time, which Settle's windows do not have; remove it",
            "actualWindowFunctionClassName",
            "the window function is the subscription's function: key; remove it",
            "processingGuarantees",
            "a window's inputs are always acknowledged once its output is stored (at-least-once); remove it");

    private static final Pattern ENVIRONMENT_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final NodeReader reader;
    private final Path folder;
    /** Names seen so far in this manifest, with the path of the subscription that used each first. */
    private final Map<String, String> names = new HashMap<>();

    /** False when a {@code jar} is a path on another machine (validate --skip-jar-check): not looked for here. */
    private final boolean jarsMustExist;

    /**
     * @param packageCache where a {@code jar: function://...} package is kept once fetched
     * @param canFetchPackages whether the manifest says where packages are fetched from ({@code pulsar.adminUrl})
     */
    SubscriptionReader(
            NodeReader reader, Path folder, boolean jarsMustExist, Path packageCache, boolean canFetchPackages) {
        this.reader = reader;
        this.folder = folder;
        this.jarsMustExist = jarsMustExist;
        this.packageCache = packageCache;
        this.canFetchPackages = canFetchPackages;
    }

    private final Path packageCache;
    private final boolean canFetchPackages;
    /** The package the last {@code jar} read names, if it names one. */
    private Optional<PackageRef> fromPackage = Optional.empty();

    /** The subscription, or empty when something in it is wrong (the problems are recorded). */
    Optional<SubscriptionSpec> read(Node node, String path) {
        Optional<NodeReader.Mapping> found = reader.mapping(node, path, KEYS, REQUIRED);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping s = found.get();
        int before = reader.problemCount();

        Optional<String> name = s.get("name").flatMap(value -> name(value, s.path("name"), path));
        List<TopicName> topics =
                s.get("topics").map(value -> topics(value, s.path("topics"))).orElse(List.of());
        Optional<Pattern> topicsPattern =
                s.get("topicsPattern").flatMap(value -> topicsPattern(value, s.path("topicsPattern")));
        if (s.has("topics") && s.has("topicsPattern")) {
            reader.problem(
                    s.get("topicsPattern").get(),
                    s.path("topicsPattern"),
                    "is set together with topics; give topics (a list of names) or topicsPattern (a regular"
                            + " expression), not both");
        } else if (!s.has("topics") && !s.has("topicsPattern")) {
            reader.problem(
                    node,
                    path + ".topics",
                    "is required; add topics (a list of names) or topicsPattern" + " (a regular expression)");
        }
        SubscriptionKind type = s.get("type")
                .flatMap(value -> reader.oneOf(value, s.path("type"), TYPES))
                .flatMap(SubscriptionKind::fromManifestName)
                .orElse(SubscriptionSpec.DEFAULT_TYPE);
        Optional<String> handler = s.get("handler").flatMap(value -> handler(value, s.path("handler")));
        Optional<String> function = s.get("function").flatMap(value -> handler(value, s.path("function")));
        FunctionSettings functionSettings = functionSettings(s, topics, name.orElse("function"));
        List<ExceptionRule> onException = s.get("onException")
                .map(value -> onException(value, s.path("onException")))
                .orElse(List.of());
        fromPackage = Optional.empty();
        Optional<Path> jar = s.get("jar").flatMap(value -> jar(value, s.path("jar")));
        Optional<PackageRef> jarPackage = fromPackage;
        Optional<SchemaKind> schema = s.get("schema")
                .flatMap(value -> reader.oneOf(value, s.path("schema"), SCHEMAS))
                .flatMap(SchemaKind::fromManifestName);
        Optional<Duration> ackTimeout = s.get("ackTimeout").flatMap(value -> ackTimeout(value, s.path("ackTimeout")));
        OptionalInt maxAttempts = s.get("maxAttempts")
                .map(value -> reader.integer(
                        value,
                        s.path("maxAttempts"),
                        2,
                        "; the Pulsar client needs" + " maxRedeliverCount (maxAttempts - 1) above 0"))
                .orElse(OptionalInt.empty());
        Optional<TopicName> deadLetterTopic =
                s.get("deadLetterTopic").flatMap(value -> deadLetterTopic(value, s.path("deadLetterTopic")));
        // "none" turns the initial subscription off, for brokers with allowAutoSubscriptionCreation=false.
        Optional<String> deadLetterSubscription = s.get("deadLetterSubscription")
                .flatMap(value -> reader.nonBlank(value, s.path("deadLetterSubscription")))
                .map(String::strip);
        boolean deadLetterStackTrace = s.get("deadLetterStackTrace")
                .flatMap(value -> reader.bool(value, s.path("deadLetterStackTrace")))
                .orElse(true);
        Optional<Duration> maxRetryDelay =
                s.get("maxRetryDelay").flatMap(value -> reader.duration(value, s.path("maxRetryDelay")));
        Optional<FailureBackoff> failureBackoff = s.get("failureBackoff")
                .map(value -> failureBackoff(value, s.path("failureBackoff")))
                .orElse(Optional.of(FailureBackoff.DEFAULT));
        int concurrency = s.get("concurrency")
                .map(value -> reader.integer(value, s.path("concurrency"), 1))
                .orElse(OptionalInt.of(SubscriptionSpec.DEFAULT_CONCURRENCY))
                .orElse(SubscriptionSpec.DEFAULT_CONCURRENCY);
        int maxPendingOutputs = s.get("maxPendingOutputs")
                .map(value -> reader.integer(value, s.path("maxPendingOutputs"), 1))
                .orElse(OptionalInt.of(OutputOptions.DEFAULT_MAX_PENDING_OUTPUTS))
                .orElse(OutputOptions.DEFAULT_MAX_PENDING_OUTPUTS);
        OutputOptions outputOptions = outputOptions(s, s.has("function")).withMaxPendingOutputs(maxPendingOutputs);
        // 0 is refused although Pulsar allows it: a zero-queue consumer fails on batched messages and cannot
        // consume several topics, and the driver needs prefetch to keep `concurrency` calls busy.
        int receiverQueueSize = s.get("receiverQueueSize")
                .map(value -> reader.integer(value, s.path("receiverQueueSize"), 1))
                .orElse(OptionalInt.of(ConsumerOptions.DEFAULT.receiverQueueSize()))
                .orElse(ConsumerOptions.DEFAULT.receiverQueueSize());
        InitialPosition initialPosition = s.get("initialPosition")
                .flatMap(value -> reader.oneOf(value, s.path("initialPosition"), POSITIONS))
                .map(value -> value.equals("latest") ? InitialPosition.LATEST : InitialPosition.EARLIEST)
                .orElse(ConsumerOptions.DEFAULT.initialPosition());
        Duration handlerTimeout = s.get("handlerTimeout")
                .flatMap(value -> reader.duration(value, s.path("handlerTimeout")))
                .orElse(SubscriptionSpec.DEFAULT_HANDLER_TIMEOUT);
        boolean batchIndexAck = s.get("batchIndexAck")
                .flatMap(value -> reader.bool(value, s.path("batchIndexAck")))
                .orElse(ConsumerOptions.DEFAULT.batchIndexAck());
        Optional<Guarantee> guaranteeWritten = s.get("guarantee")
                .flatMap(value -> reader.oneOf(value, s.path("guarantee"), GUARANTEES))
                .flatMap(Guarantee::fromManifestName);
        Guarantee guarantee = guaranteeWritten.orElse(Guarantee.AT_LEAST_ONCE);
        CommitBatch commitBatch = s.get("commitBatch")
                .map(value -> commitBatch(value, s.path("commitBatch")))
                .orElse(CommitBatch.DEFAULT);
        Map<String, String> config =
                s.get("config").map(value -> config(value, s.path("config"))).orElse(Map.of());

        checkDeadLetterRules(s, type);
        if (guarantee == Guarantee.EXACTLY_ONCE) {
            checkExactlyOnceRules(s, type);
        } else if (s.has("commitBatch") && (guaranteeWritten.isPresent() || !s.has("guarantee"))) {
            // A misspelt guarantee is reported at its own key; it is no reason to call commitBatch misplaced.
            reader.problem(
                    s.get("commitBatch").get(),
                    s.path("commitBatch"),
                    "is set while the guarantee is at-least-once" + (s.has("guarantee") ? "" : " (the default)")
                            + ": commitBatch groups exactly-once transactions; set guarantee: exactly-once or remove"
                            + " commitBatch");
        }
        for (String key : List.of("deadLetterSubscription", "deadLetterStackTrace")) {
            if (s.has(key) && !s.has("deadLetterTopic")) {
                reader.problem(
                        s.get(key).get(),
                        s.path(key),
                        "is set without deadLetterTopic, so it has no effect; add deadLetterTopic and maxAttempts,"
                                + " or remove it");
            }
        }
        if (maxRetryDelay.isPresent()
                && ackTimeout.isPresent()
                && maxRetryDelay.get().compareTo(ackTimeout.get()) >= 0) {
            reader.problem(
                    s.get("maxRetryDelay").get(),
                    s.path("maxRetryDelay"),
                    "must be shorter than ackTimeout ("
                            + DurationText.format(ackTimeout.get()) + "), was '"
                            + DurationText.format(maxRetryDelay.get())
                            + "': the client's ack-timeout timer would bring the message back before the delay ends."
                            + " Shorten maxRetryDelay or lengthen ackTimeout");
        }
        deadLetterTopic.ifPresent(dlq -> checkNotConsumed(s, dlq, topics, topicsPattern));
        for (int i = 0; i < onException.size(); i++) {
            ExceptionRule rule = onException.get(i);
            if (rule.delay().isPresent()
                    && ackTimeout.isPresent()
                    && rule.delay().get().compareTo(ackTimeout.get()) >= 0) {
                String rulePath = s.path("onException") + "[" + i + "].outcome";
                reader.problem(
                        s.get("onException").get(),
                        rulePath,
                        "must hold the message for less than ackTimeout (" + DurationText.format(ackTimeout.get())
                                + "), was '" + rule.describeOutcome() + "': the client's ack-timeout timer would"
                                + " bring the message back first. Shorten the delay or lengthen ackTimeout");
            }
        }
        functionSettings.window().ifPresent(window -> checkWindow(s, window, ackTimeout, maxPendingOutputs));
        if (s.has("handler") && s.has("function")) {
            reader.problem(
                    s.get("function").get(),
                    s.path("function"),
                    "is set together with handler; name a Settle handler (handler) or a Pulsar Function"
                            + " (function), not both");
        }
        if (!s.has("function")) {
            for (String key : FUNCTION_ONLY) {
                s.get(key)
                        .ifPresent(value -> reader.problem(
                                value,
                                s.path(key),
                                "is read only for a Pulsar Function; add function: <class>, or remove " + key
                                        + (key.equals("secrets")
                                                ? " (a handler reads its settings from config)"
                                                : key.equals("windowConfig")
                                                        ? " (a handler is called with each message)"
                                                        : " (a handler publishes through HandlerContext.publisher)")));
            }
        }

        if (reader.problemCount() != before || name.isEmpty() || jar.isEmpty()) {
            return Optional.empty();
        }
        Optional<DeadLetter> deadLetter = deadLetterTopic.map(topic -> new DeadLetter(
                maxAttempts.getAsInt(),
                topic.toString(),
                deadLetterSubscription.isPresent()
                        ? deadLetterSubscription.filter(subscription -> !subscription.equals(NONE))
                        : Optional.of(DeadLetter.defaultSubscription(name.get())),
                deadLetterStackTrace));
        return Optional.of(new SubscriptionSpec(
                name.get(),
                topicsPattern.isPresent()
                        ? Topics.matching(topicsPattern.get().pattern())
                        : Topics.named(topics.stream().map(TopicName::toString).toList()),
                type,
                function.isPresent()
                        ? new HandlerSource(function, jar.get(), schema, true, jarPackage)
                        : new HandlerSource(handler, jar.get(), schema, false, jarPackage),
                new ConsumerOptions(ackTimeout, receiverQueueSize, initialPosition, batchIndexAck),
                deadLetter,
                new Retries(maxRetryDelay, failureBackoff),
                concurrency,
                handlerTimeout,
                config,
                function.isPresent() ? functionSettings : FunctionSettings.NONE,
                onException,
                outputOptions,
                guarantee,
                commitBatch));
    }

    private FunctionSettings functionSettings(NodeReader.Mapping s, List<TopicName> topics, String subscription) {
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
                .flatMap(text -> topic(value, outputPath, text))
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
        Optional<SchemaKind> outputSchema = s.get("outputSchema")
                .flatMap(value -> reader.oneOf(value, s.path("outputSchema"), SCHEMAS))
                .flatMap(SchemaKind::fromManifestName);
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
        Optional<String> outputSerde = s.get("outputSerde").flatMap(value -> handler(value, s.path("outputSerde")));
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
        boolean inputProperties = s.get("inputProperties")
                .flatMap(value -> reader.bool(value, s.path("inputProperties")))
                .orElse(true);
        Optional<String> state = s.get("state").flatMap(value -> state(value, s.path("state"), topics, subscription));
        int numInstances = s.get("numInstances")
                .map(value -> reader.integer(value, s.path("numInstances"), 1))
                .orElse(OptionalInt.of(1))
                .orElse(1);
        int instanceId = s.get("instanceId")
                .map(value -> reader.integer(value, s.path("instanceId"), 0))
                .orElse(OptionalInt.of(0))
                .orElse(0);
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
        List<String> known = new ArrayList<>(WINDOW_KEYS);
        known.addAll(WINDOW_REFUSED.keySet());
        Optional<NodeReader.Mapping> found = reader.mapping(node, path, known, List.of());
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping w = found.get();
        int before = reader.problemCount();
        WINDOW_REFUSED.forEach((key, why) -> w.get(key).ifPresent(value -> reader.problem(value, w.path(key), why)));
        OptionalInt lengthCount = positive(w, "windowLengthCount");
        OptionalInt lengthMs = positive(w, "windowLengthDurationMs");
        OptionalInt slidingCount = positive(w, "slidingIntervalCount");
        OptionalInt slidingMs = positive(w, "slidingIntervalDurationMs");
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
     * A window's inputs stay unacknowledged until it is published: the ack timeout must not bring them back first, and
     * a count window must fit in {@code maxPendingOutputs}, or receiving would stop before the window fills.
     */
    private void checkWindow(
            NodeReader.Mapping s, WindowSettings window, Optional<Duration> ackTimeout, int maxPendingOutputs) {
        Node node = s.get("windowConfig").get();
        String path = s.path("windowConfig");
        long waiting = Math.max(window.length(), window.slidingInterval());
        if (window.byCount() && waiting > maxPendingOutputs) {
            reader.problem(
                    node,
                    path,
                    "holds up to " + waiting + " messages unacknowledged, more than maxPendingOutputs ("
                            + maxPendingOutputs + "), so receiving would stop before the window fills; raise"
                            + " maxPendingOutputs to at least " + waiting + " or shorten the window");
        }
        Duration longest = Duration.ofMillis(window.length() + window.slidingInterval());
        if (!window.byCount() && ackTimeout.isPresent() && ackTimeout.get().compareTo(longest) <= 0) {
            reader.problem(
                    node,
                    path,
                    "holds a message unacknowledged for up to " + DurationText.format(longest)
                            + " (window length plus sliding interval), and ackTimeout ("
                            + DurationText.format(ackTimeout.get()) + ") would bring it back first; lengthen"
                            + " ackTimeout beyond " + DurationText.format(longest) + " or remove it");
        }
    }

    private OptionalInt positive(NodeReader.Mapping w, String key) {
        return w.get(key).map(value -> reader.integer(value, w.path(key), 1)).orElse(OptionalInt.empty());
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
                    Optional<String> topic = topic(value, entryPath, name).map(TopicName::toString);
                    Optional<String> serde = handler(value, entryPath);
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
            return topic(node, path, text).map(TopicName::toString);
        });
    }

    /**
     * The producer settings of {@code output:} written as a mapping, at their defaults otherwise. A handler's
     * {@code output:} has no topic: it names its topics with {@code HandlerContext.publisher}.
     */
    private OutputOptions outputOptions(NodeReader.Mapping s, boolean function) {
        OutputOptions defaults = OutputOptions.DEFAULT;
        Optional<Node> node = s.get("output");
        if (node.isEmpty() || !(node.get() instanceof MappingNode)) {
            if (node.isPresent() && !function) {
                reader.problem(
                        node.get(),
                        s.path("output"),
                        "is read only for a Pulsar Function; add function: <class>, or remove output (a handler"
                                + " publishes through HandlerContext.publisher)");
            }
            return defaults;
        }
        Optional<NodeReader.Mapping> found = reader.mapping(node.get(), s.path("output"), OUTPUT_KEYS, List.of());
        if (found.isEmpty()) {
            return defaults;
        }
        NodeReader.Mapping o = found.get();
        if (o.has("topic") && !function) {
            reader.problem(
                    o.get("topic").get(),
                    o.path("topic"),
                    "is read only for a Pulsar Function; a handler names its topics with HandlerContext.publisher."
                            + " Remove topic (the other output settings apply to the handler's publishers)");
        }
        boolean batching = o.get("batching")
                .flatMap(value -> reader.bool(value, o.path("batching")))
                .orElse(defaults.batching());
        Duration batchingMaxDelay = o.get("batchingMaxDelay")
                .flatMap(value -> reader.duration(value, o.path("batchingMaxDelay")))
                .orElse(defaults.batchingMaxDelay());
        if (!batching && o.has("batchingMaxDelay")) {
            reader.problem(
                    o.get("batchingMaxDelay").get(),
                    o.path("batchingMaxDelay"),
                    "is set with batching: false, so it has no effect; remove it, or turn batching on");
        }
        OutputOptions.Compression compression = o.get("compression")
                .flatMap(value -> reader.oneOf(value, o.path("compression"), OutputOptions.Compression.manifestNames()))
                .flatMap(OutputOptions.Compression::fromManifestName)
                .orElse(defaults.compression());
        int maxPendingMessages = o.get("maxPendingMessages")
                .map(value -> reader.integer(
                        value, o.path("maxPendingMessages"), 0, " (0 leaves it to the client's memory limit)"))
                .orElse(OptionalInt.of(defaults.maxPendingMessages()))
                .orElse(defaults.maxPendingMessages());
        return new OutputOptions(
                defaults.maxPendingOutputs(), batching, batchingMaxDelay, compression, maxPendingMessages);
    }

    /**
     * {@code commitBatch}: a mapping of {@code maxDeliveries} and {@code maxDelay}, each defaulting to
     * {@link CommitBatch#DEFAULT}'s; {@link CommitBatch#DEFAULT} itself when a value is wrong (the problem is
     * recorded). {@code maxDeliveries: 1} gives {@link CommitBatch#ONE_PER_DELIVERY} whatever {@code maxDelay} says
     * (checked all the same): a transaction of one delivery has nothing to wait for, so the delay is unused, and a
     * reload that changes only it changes nothing.
     */
    private CommitBatch commitBatch(Node node, String path) {
        Optional<NodeReader.Mapping> found = reader.mapping(node, path, COMMIT_BATCH_KEYS, List.of());
        if (found.isEmpty()) {
            return CommitBatch.DEFAULT;
        }
        NodeReader.Mapping c = found.get();
        OptionalInt maxDeliveries = c.get("maxDeliveries")
                .map(value -> maxDeliveries(value, c.path("maxDeliveries")))
                .orElse(OptionalInt.of(CommitBatch.DEFAULT_MAX_DELIVERIES));
        Optional<Duration> maxDelay = c.get("maxDelay")
                .map(value -> maxDelay(value, c.path("maxDelay")))
                .orElse(Optional.of(CommitBatch.DEFAULT_MAX_DELAY));
        if (maxDeliveries.isEmpty() || maxDelay.isEmpty()) {
            return CommitBatch.DEFAULT;
        }
        return maxDeliveries.getAsInt() == 1
                ? CommitBatch.ONE_PER_DELIVERY
                : new CommitBatch(maxDeliveries.getAsInt(), maxDelay.get());
    }

    private OptionalInt maxDeliveries(Node node, String path) {
        OptionalInt value = reader.integer(node, path, 1, "; write 1 for one transaction per delivery");
        if (value.isPresent() && value.getAsInt() > CommitBatch.MAX_DELIVERIES) {
            reader.problem(
                    node,
                    path,
                    "must be at most " + CommitBatch.MAX_DELIVERIES + ", was '" + value.getAsInt() + "': a"
                            + " transaction's acknowledgements go to the broker in one request. Lower it to "
                            + CommitBatch.MAX_DELIVERIES + " or less");
            return OptionalInt.empty();
        }
        return value;
    }

    private Optional<Duration> maxDelay(Node node, String path) {
        return reader.durationOrZero(node, path).flatMap(delay -> {
            if (delay.compareTo(CommitBatch.MAX_DELAY) > 0) {
                reader.problem(
                        node,
                        path,
                        "must be at most " + DurationText.format(CommitBatch.MAX_DELAY) + ", was '"
                                + DurationText.format(delay) + "': a transaction held open longer only adds latency"
                                + " (every delivery in it waits for its commit). Shorten it to "
                                + DurationText.format(CommitBatch.MAX_DELAY) + " or less");
                return Optional.empty();
            }
            return Optional.of(delay);
        });
    }

    /** {@code onException}: a list of {@code {type: <class>, outcome: drop | retry | retryAfter <d>}}. */
    private List<ExceptionRule> onException(Node node, String path) {
        List<ExceptionRule> rules = new ArrayList<>();
        Optional<List<Node>> elements = reader.sequence(node, path);
        if (elements.isEmpty()) {
            return rules;
        }
        for (int i = 0; i < elements.get().size(); i++) {
            String elementPath = path + "[" + i + "]";
            reader.mapping(elements.get().get(i), elementPath, EXCEPTION_RULE_KEYS, EXCEPTION_RULE_KEYS)
                    .ifPresent(rule -> {
                        Optional<String> type = rule.get("type").flatMap(value -> handler(value, rule.path("type")));
                        Optional<ExceptionRule> parsed = rule.get("outcome")
                                .flatMap(value -> reader.nonBlank(value, rule.path("outcome"))
                                        .flatMap(text -> exceptionOutcome(value, rule.path("outcome"), text)));
                        if (type.isPresent() && parsed.isPresent()) {
                            rules.add(new ExceptionRule(
                                    type.get(),
                                    parsed.get().outcome(),
                                    parsed.get().delay()));
                        }
                    });
        }
        return rules;
    }

    /** The outcome of a rule, with a placeholder type the caller replaces. */
    private Optional<ExceptionRule> exceptionOutcome(Node node, String path, String text) {
        String[] words = text.strip().split("\\s+");
        if (words.length == 1 && words[0].equals("drop")) {
            return Optional.of(new ExceptionRule("?", ExceptionRule.Action.DROP, Optional.empty()));
        }
        if (words.length == 1 && words[0].equals("retry")) {
            return Optional.of(new ExceptionRule("?", ExceptionRule.Action.RETRY, Optional.empty()));
        }
        if (words.length == 2 && words[0].equals("retryAfter")) {
            try {
                return Optional.of(new ExceptionRule(
                        "?", ExceptionRule.Action.RETRY_AFTER, Optional.of(DurationText.parse(words[1]))));
            } catch (IllegalArgumentException e) {
                reader.problem(node, path, "retryAfter's delay " + e.getMessage());
                return Optional.empty();
            }
        }
        reader.problem(
                node,
                path,
                "must be drop, retry or retryAfter <duration> (such as 'retryAfter 10s'), was '" + text.strip() + "'");
        return Optional.empty();
    }

    /**
     * {@code none}, or a mapping of {@code initial}, {@code multiplier} and {@code max}, each defaulting to
     * {@link FailureBackoff#DEFAULT}'s.
     */
    private Optional<FailureBackoff> failureBackoff(Node node, String path) {
        if (node instanceof ScalarNode) {
            reader.text(node, path)
                    .filter(text -> !text.strip().equals(NONE))
                    .ifPresent(text -> reader.problem(
                            node,
                            path,
                            "must be 'none' (a failed message comes back at once) or a mapping such as {initial: 100ms,"
                                    + " multiplier: 2, max: 30s}, was '" + text + "'"));
            return Optional.empty();
        }
        Optional<NodeReader.Mapping> found = reader.mapping(node, path, BACKOFF_KEYS, List.of());
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping b = found.get();
        FailureBackoff defaults = FailureBackoff.DEFAULT;
        Optional<Duration> initial = b.get("initial")
                .map(value -> reader.duration(value, b.path("initial")))
                .orElse(Optional.of(defaults.initial()));
        Optional<Double> multiplier = b.get("multiplier")
                .map(value -> multiplier(value, b.path("multiplier")))
                .orElse(Optional.of(defaults.multiplier()));
        Optional<Duration> max =
                b.get("max").map(value -> reader.duration(value, b.path("max"))).orElse(Optional.of(defaults.max()));
        if (initial.isEmpty() || multiplier.isEmpty() || max.isEmpty()) {
            return Optional.empty();
        }
        if (max.get().compareTo(initial.get()) < 0) {
            reader.problem(
                    b.get("max").orElse(node),
                    b.path("max"),
                    "must not be shorter than initial ("
                            + DurationText.format(initial.get()) + "), was '" + DurationText.format(max.get())
                            + "'; raise max or lower initial");
            return Optional.empty();
        }
        return Optional.of(new FailureBackoff(initial.get(), multiplier.get(), max.get()));
    }

    private Optional<Double> multiplier(Node node, String path) {
        return reader.nonBlank(node, path).map(String::strip).flatMap(text -> {
            try {
                double value = Double.parseDouble(text);
                if (value >= 1 && value <= 100) {
                    return Optional.of(value);
                }
            } catch (NumberFormatException e) {
                // reported below with the accepted range
            }
            reader.problem(
                    node,
                    path,
                    "must be a number from 1 to 100, such as 2 or 1.5, was '" + text
                            + "'; 1 waits the same after every failure");
            return Optional.empty();
        });
    }

    private void checkDeadLetterRules(NodeReader.Mapping s, SubscriptionKind type) {
        boolean cap = s.has("maxAttempts");
        boolean dlq = s.has("deadLetterTopic");
        if (cap && !dlq) {
            reader.problem(
                    s.get("maxAttempts").get(),
                    s.path("maxAttempts"),
                    "is set without deadLetterTopic;"
                            + " a capped message must go somewhere: add deadLetterTopic, or remove maxAttempts");
        } else if (dlq && !cap) {
            reader.problem(
                    s.get("deadLetterTopic").get(),
                    s.path("deadLetterTopic"),
                    "is set without maxAttempts;"
                            + " add maxAttempts (deliveries before a failing message is dead-lettered, at least 2), or"
                            + " remove deadLetterTopic");
        }
        if ((cap || dlq) && !type.countsRedeliveries()) {
            String key = cap ? "maxAttempts" : "deadLetterTopic";
            Node at = s.get("type").orElse(s.get(key).get());
            String article = type == SubscriptionKind.EXCLUSIVE ? "an " : "a ";
            reader.problem(
                    at,
                    s.path("type"),
                    article + type.manifestName() + " subscription cannot have a"
                            + " dead-letter cap: the broker keeps no redelivery count on Exclusive and Failover subscriptions"
                            + " (every message arrives with count 0), so the cap would never fire. Use Shared or Key_Shared,"
                            + " or remove maxAttempts and deadLetterTopic");
        }
    }

    /**
     * What exactly-once cannot keep (docs/exactly-once.md, "Limits"). Settle writes every dead letter of an
     * exactly-once subscription, in a transaction with the input's acknowledgement, and its consumer has no dead-letter
     * policy of its own (the client's letters are uncaused and outside any transaction); an ack timeout gives Settle no
     * cause to write one with, so a message left without outcome would come back past the cap for ever: a cap beside an
     * ack timeout is refused. A window's output is published when the window fires, outside the transactions of the
     * deliveries it holds (issue 41), so {@code windowConfig} is refused. On Exclusive and Failover a negative acknowledgement rewinds every
     * unacknowledged message, so one failure would abort and run again every delivery whose transaction is open
     * beside it; only Shared and Key_Shared are built and tested.
     */
    private void checkExactlyOnceRules(NodeReader.Mapping s, SubscriptionKind type) {
        Node at = s.get("guarantee").get();
        if (s.has("ackTimeout") && s.has("maxAttempts") && s.has("deadLetterTopic")) {
            reader.problem(
                    s.get("ackTimeout").get(),
                    s.path("ackTimeout"),
                    "cannot be set with guarantee: exactly-once and a dead-letter cap: at exactly-once Settle"
                            + " writes every dead letter, in a transaction, and the Pulsar client none, so a message"
                            + " whose ack timeout runs out on its last attempt would come back past the cap for ever,"
                            + " never dead-lettered. Remove ackTimeout (a delivery that"
                            + " gives no outcome then stays unacknowledged until its consumer disconnects; failures,"
                            + " retries and refused delays are dead-lettered by Settle, in a transaction), remove"
                            + " maxAttempts and deadLetterTopic, or use guarantee: at-least-once");
        }
        if (s.has("windowConfig") && s.has("function")) {
            // A handler's windowConfig is refused on its own (read only for a function): one problem is enough.
            reader.problem(
                    s.get("windowConfig").get(),
                    s.path("windowConfig"),
                    "cannot be set with guarantee: exactly-once: a window's output is published when the window"
                            + " fires, outside the transactions of the messages it holds, so an abort or a restart"
                            + " can publish it twice, and a window open longer than the transaction timeout"
                            + " (handlerTimeout + 30s) would see each message's transaction expire before it fires."
                            + " Remove windowConfig, or set guarantee: at-least-once (a window's inputs are then"
                            + " acknowledged once its output is stored)");
        }
        if (!type.countsRedeliveries()) {
            reader.problem(
                    at,
                    s.path("guarantee"),
                    "exactly-once runs on Shared and Key_Shared subscriptions only, was type '"
                            + type.manifestName() + "': on Exclusive and Failover a failure's negative"
                            + " acknowledgement rewinds every unacknowledged message, running again the deliveries"
                            + " whose transactions are open beside it. Use Key_Shared (keys stay in order) or"
                            + " Shared, or guarantee: at-least-once");
        }
    }

    private void checkNotConsumed(
            NodeReader.Mapping s, TopicName dlq, List<TopicName> topics, Optional<Pattern> topicsPattern) {
        Node at = s.get("deadLetterTopic").get();
        String full = dlq.toString();
        for (int i = 0; i < topics.size(); i++) {
            if (topics.get(i).toString().equals(full)) {
                reader.problem(
                        at,
                        s.path("deadLetterTopic"),
                        "'" + full + "' is also consumed by this subscription"
                                + " (topics[" + i
                                + "]), so dead letters would be handled again; use a topic of its own,"
                                + " such as '" + full + "-dlq'");
                return;
            }
        }
        if (topicsPattern.isPresent() && topicsPattern.get().matcher(full).matches()) {
            reader.problem(
                    at,
                    s.path("deadLetterTopic"),
                    "'" + full + "' matches this subscription's topicsPattern '"
                            + topicsPattern.get().pattern()
                            + "', so dead letters would be handled again; use a name the"
                            + " pattern does not match");
        }
    }

    /** Names label consumers and metrics, so a second subscription of the same name is refused. */
    private Optional<String> name(Node node, String path, String subscriptionPath) {
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

    private List<TopicName> topics(Node node, String path) {
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

    private Optional<TopicName> topic(Node node, String path, String text) {
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
    private Optional<Pattern> topicsPattern(Node node, String path) {
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

    private Optional<TopicName> deadLetterTopic(Node node, String path) {
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

    private Optional<Duration> ackTimeout(Node node, String path) {
        return reader.duration(node, path).flatMap(timeout -> {
            if (timeout.compareTo(ConsumerOptions.MIN_ACK_TIMEOUT) < 0) {
                reader.problem(
                        node,
                        path,
                        "must be at least 1s (the Pulsar client's floor), was '" + DurationText.format(timeout)
                                + "'; remove it for no ack timeout");
                return Optional.empty();
            }
            return Optional.of(timeout);
        });
    }

    private Optional<String> handler(Node node, String path) {
        return reader.nonBlank(node, path).map(String::strip).flatMap(text -> {
            if (!CLASS_NAME.matcher(text).matches()) {
                reader.problem(
                        node, path, "must be a class name such as 'com.acme.orders.OrderHandler', was '" + text + "'");
                return Optional.empty();
            }
            return Optional.of(text);
        });
    }

    private Optional<Path> jar(Node node, String path) {
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
    private Optional<Path> packageJar(Node node, String path, String text) {
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

    private Map<String, String> config(Node node, String path) {
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
