package dev.settle.runtime.manifest;

import dev.settle.runtime.manifest.ManifestKey.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Reads the mappings nested in a subscription entry ({@code output}'s producer settings, {@code commitBatch},
 * {@code onException}, {@code failureBackoff}), each key as its row in {@link ManifestKeys} says, and the rules
 * within each mapping.
 */
final class SubscriptionMappingsReader {
    private static final String NONE = "none";

    private final NodeReader reader;
    private final SubscriptionValues values;

    SubscriptionMappingsReader(NodeReader reader, SubscriptionValues values) {
        this.reader = reader;
        this.values = values;
    }

    /**
     * The producer settings of {@code output:} written as a mapping, at their defaults otherwise. A handler's
     * {@code output:} has no topic: it names its topics with {@code HandlerContext.publisher}.
     */
    OutputOptions outputOptions(NodeReader.Mapping s, boolean function) {
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
        KeyReader keys = new KeyReader(reader, Level.OUTPUT);
        Optional<NodeReader.Mapping> found = keys.mapping(node.get(), s.path("output"));
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
        boolean batching = keys.boolOrDefault(o, "batching");
        Duration batchingMaxDelay = keys.durationOrDefault(o, "batchingMaxDelay");
        if (!batching && o.has("batchingMaxDelay")) {
            reader.problem(
                    o.get("batchingMaxDelay").get(),
                    o.path("batchingMaxDelay"),
                    "is set with batching: false, so it has no effect; remove it, or turn batching on");
        }
        OutputOptions.Compression compression = keys.oneOf(o, "compression")
                .or(() -> Optional.of(keys.key("compression").textDefault()))
                .flatMap(OutputOptions.Compression::fromManifestName)
                .orElse(defaults.compression());
        int maxPendingMessages = keys.integerOrDefault(o, "maxPendingMessages");
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
    CommitBatch commitBatch(Node node, String path) {
        KeyReader keys = new KeyReader(reader, Level.COMMIT_BATCH);
        Optional<NodeReader.Mapping> found = keys.mapping(node, path);
        if (found.isEmpty()) {
            return CommitBatch.DEFAULT;
        }
        NodeReader.Mapping c = found.get();
        OptionalInt maxDeliveries = c.has("maxDeliveries")
                ? keys.integer(c, "maxDeliveries")
                : OptionalInt.of(keys.key("maxDeliveries").intDefault());
        Optional<Duration> maxDelay = c.has("maxDelay")
                ? keys.duration(c, "maxDelay")
                : Optional.of(keys.key("maxDelay").durationDefault());
        if (maxDeliveries.isEmpty() || maxDelay.isEmpty()) {
            return CommitBatch.DEFAULT;
        }
        return maxDeliveries.getAsInt() == 1
                ? CommitBatch.ONE_PER_DELIVERY
                : new CommitBatch(maxDeliveries.getAsInt(), maxDelay.get());
    }

    /**
     * {@code breaker}: a mapping of {@code enabled}, {@code minKeys}, {@code window}, {@code maxProbeInterval} and
     * {@code exceptions} (a list of class names), each defaulting to {@link BreakerSettings#DEFAULT}'s; a wrong value
     * is recorded as a problem and read as its default.
     */
    BreakerSettings breaker(Node node, String path) {
        KeyReader keys = new KeyReader(reader, Level.BREAKER);
        Optional<NodeReader.Mapping> found = keys.mapping(node, path);
        if (found.isEmpty()) {
            return BreakerSettings.DEFAULT;
        }
        NodeReader.Mapping b = found.get();
        List<String> exceptions = new ArrayList<>();
        b.get("exceptions")
                .flatMap(value -> reader.sequence(value, b.path("exceptions")))
                .ifPresent(elements -> {
                    for (int i = 0; i < elements.size(); i++) {
                        values.handler(elements.get(i), b.path("exceptions") + "[" + i + "]")
                                .ifPresent(exceptions::add);
                    }
                });
        return new BreakerSettings(
                keys.boolOrDefault(b, "enabled"),
                keys.integerOrDefault(b, "minKeys"),
                keys.durationOrDefault(b, "window"),
                keys.durationOrDefault(b, "maxProbeInterval"),
                exceptions);
    }

    /**
     * {@code batch}: a mapping of {@code maxMessages}, {@code maxBytes} and {@code maxWait}, each defaulting to
     * {@link BatchLimits#DEFAULT}'s; {@link BatchLimits#DEFAULT} itself when a value is wrong (the problem is recorded).
     */
    BatchLimits batch(Node node, String path) {
        KeyReader keys = new KeyReader(reader, Level.BATCH);
        Optional<NodeReader.Mapping> found = keys.mapping(node, path);
        if (found.isEmpty()) {
            return BatchLimits.DEFAULT;
        }
        NodeReader.Mapping b = found.get();
        OptionalInt maxMessages = b.has("maxMessages")
                ? keys.integer(b, "maxMessages")
                : OptionalInt.of(BatchLimits.DEFAULT_MAX_MESSAGES);
        Optional<Long> maxBytes =
                b.has("maxBytes") ? keys.size(b, "maxBytes") : Optional.of(BatchLimits.DEFAULT_MAX_BYTES);
        Optional<Duration> maxWait =
                b.has("maxWait") ? keys.duration(b, "maxWait") : Optional.of(BatchLimits.DEFAULT_MAX_WAIT);
        if (maxMessages.isEmpty() || maxBytes.isEmpty() || maxWait.isEmpty()) {
            return BatchLimits.DEFAULT;
        }
        return new BatchLimits(maxMessages.getAsInt(), maxBytes.get(), maxWait.get());
    }

    /** {@code onException}: a list of {@code {type: <class>, outcome: drop | retry | retryAfter <d>}}. */
    List<ExceptionRule> onException(Node node, String path) {
        List<ExceptionRule> rules = new ArrayList<>();
        Optional<List<Node>> elements = reader.sequence(node, path);
        if (elements.isEmpty()) {
            return rules;
        }
        for (int i = 0; i < elements.get().size(); i++) {
            String elementPath = path + "[" + i + "]";
            new KeyReader(reader, Level.EXCEPTION_RULE)
                    .mapping(elements.get().get(i), elementPath)
                    .ifPresent(rule -> {
                        Optional<String> type =
                                rule.get("type").flatMap(value -> values.handler(value, rule.path("type")));
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
    Optional<FailureBackoff> failureBackoff(Node node, String path) {
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
        KeyReader keys = new KeyReader(reader, Level.FAILURE_BACKOFF);
        Optional<NodeReader.Mapping> found = keys.mapping(node, path);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping b = found.get();
        Optional<Duration> initial = b.has("initial")
                ? keys.duration(b, "initial")
                : Optional.of(keys.key("initial").durationDefault());
        Optional<Double> multiplier = b.has("multiplier")
                ? keys.number(b, "multiplier")
                : Optional.of(Double.parseDouble(keys.key("multiplier").textDefault()));
        Optional<Duration> max = b.has("max")
                ? keys.duration(b, "max")
                : Optional.of(keys.key("max").durationDefault());
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
}
