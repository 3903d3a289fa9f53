package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads one entry of {@code subscriptions:} (docs/design.md, "Refusing to start"): each key as its row in
 * {@link ManifestKeys} says, the values that need more than their type in {@link SubscriptionValues}, the nested
 * mappings in {@link SubscriptionMappingsReader}, a function's keys in {@link FunctionSettingsReader}, and the rules
 * across keys in {@link SubscriptionRules}.
 */
final class SubscriptionReader {
    private static final String NONE = "none";

    private final NodeReader reader;
    private final KeyReader keys;
    private final SubscriptionValues values;
    private final SubscriptionMappingsReader mappings;
    private final FunctionSettingsReader functions;
    private final SubscriptionRules rules;

    /**
     * @param jarsMustExist false when a {@code jar} is a path on another machine (validate --skip-jar-check)
     * @param packageCache where a {@code jar: function://...} package is kept once fetched
     * @param canFetchPackages whether the manifest says where packages are fetched from ({@code pulsar.adminUrl})
     */
    SubscriptionReader(
            NodeReader reader, Path folder, boolean jarsMustExist, Path packageCache, boolean canFetchPackages) {
        this.reader = reader;
        this.keys = new KeyReader(reader, ManifestKey.Level.SUBSCRIPTION);
        this.values = new SubscriptionValues(reader, folder, jarsMustExist, packageCache, canFetchPackages);
        this.mappings = new SubscriptionMappingsReader(reader, values);
        this.functions = new FunctionSettingsReader(reader, values);
        this.rules = new SubscriptionRules(reader);
    }

    /** The subscription, or empty when something in it is wrong (the problems are recorded). */
    Optional<SubscriptionSpec> read(Node node, String path) {
        Optional<NodeReader.Mapping> found = keys.mapping(node, path);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping s = found.get();
        int before = reader.problemCount();

        Optional<String> name = s.get("name").flatMap(value -> values.name(value, s.path("name"), path));
        List<TopicName> topics = s.get("topics")
                .map(value -> values.topics(value, s.path("topics")))
                .orElse(List.of());
        Optional<Pattern> topicsPattern =
                s.get("topicsPattern").flatMap(value -> values.topicsPattern(value, s.path("topicsPattern")));
        rules.checkTopicsOrPattern(s, node, path);
        SubscriptionKind type = keys.oneOf(s, "type")
                .or(() -> Optional.of(keys.key("type").textDefault()))
                .flatMap(SubscriptionKind::fromManifestName)
                .orElseThrow();
        Optional<String> handler = s.get("handler").flatMap(value -> values.handler(value, s.path("handler")));
        Optional<String> function = s.get("function").flatMap(value -> values.handler(value, s.path("function")));
        FunctionSettings functionSettings = functions.read(s, topics, name.orElse("function"));
        List<ExceptionRule> onException = s.get("onException")
                .map(value -> mappings.onException(value, s.path("onException")))
                .orElse(List.of());
        Optional<Path> jar = s.get("jar").flatMap(value -> values.jar(value, s.path("jar")));
        Optional<PackageRef> jarPackage = jar.isPresent() ? values.lastPackage() : Optional.empty();
        Optional<SchemaKind> schema = keys.oneOf(s, "schema").flatMap(SchemaKind::fromManifestName);
        Optional<Duration> ackTimeout = keys.duration(s, "ackTimeout");
        OptionalInt maxAttempts = keys.integer(s, "maxAttempts");
        Optional<TopicName> deadLetterTopic =
                s.get("deadLetterTopic").flatMap(value -> values.deadLetterTopic(value, s.path("deadLetterTopic")));
        // "none" turns the initial subscription off, for brokers with allowAutoSubscriptionCreation=false.
        Optional<String> deadLetterSubscription = s.get("deadLetterSubscription")
                .flatMap(value -> reader.nonBlank(value, s.path("deadLetterSubscription")))
                .map(String::strip);
        boolean deadLetterStackTrace = keys.boolOrDefault(s, "deadLetterStackTrace");
        boolean hold = keys.oneOf(s, "onCap").map("hold"::equals).orElse(false);
        int redriveRate = keys.integerOrDefault(s, "redriveRate");
        Optional<Duration> maxRetryDelay = keys.duration(s, "maxRetryDelay");
        Optional<FailureBackoff> failureBackoff = s.get("failureBackoff")
                .map(value -> mappings.failureBackoff(value, s.path("failureBackoff")))
                .orElse(Optional.of(FailureBackoff.DEFAULT));
        Optional<RetryOrder> order = keys.oneOf(s, "order").flatMap(RetryOrder::fromManifestName);
        Duration keyHoldTimeout = keys.durationOrDefault(s, "keyHoldTimeout");
        boolean durableDelays = keys.boolOrDefault(s, "durableDelays");
        Duration durableAfter = keys.durationOrDefault(s, "durableAfter");
        int concurrency = keys.integerOrDefault(s, "concurrency");
        int maxPendingOutputs = keys.integerOrDefault(s, "maxPendingOutputs");
        OutputOptions outputOptions =
                mappings.outputOptions(s, s.has("function")).withMaxPendingOutputs(maxPendingOutputs);
        int receiverQueueSize = keys.integerOrDefault(s, "receiverQueueSize");
        InitialPosition initialPosition = keys.oneOf(s, "initialPosition")
                .or(() -> Optional.of(keys.key("initialPosition").textDefault()))
                .map(value -> value.equals("latest") ? InitialPosition.LATEST : InitialPosition.EARLIEST)
                .orElseThrow();
        Duration handlerTimeout = keys.durationOrDefault(s, "handlerTimeout");
        boolean batchIndexAck = keys.boolOrDefault(s, "batchIndexAck");
        boolean journal = keys.boolOrDefault(s, "journal");
        Optional<TopicName> journalTopic = s.get("journalTopic")
                .flatMap(value -> reader.nonBlank(value, s.path("journalTopic"))
                        .flatMap(text -> values.topic(value, s.path("journalTopic"), text)));
        if (journalTopic.isPresent() && !journal) {
            reader.problem(
                    s.get("journalTopic").orElseThrow(),
                    s.path("journalTopic"),
                    "is only used with journal: true; add journal: true, or remove journalTopic");
        }
        boolean journalPerHandling = keys.boolOrDefault(s, "journalPerHandling");
        if (journalPerHandling && !journal) {
            reader.problem(
                    s.get("journalPerHandling").orElseThrow(),
                    s.path("journalPerHandling"),
                    "is only used with journal: true; add journal: true, or remove journalPerHandling");
        }
        Optional<Guarantee> guaranteeWritten = keys.oneOf(s, "guarantee").flatMap(Guarantee::fromManifestName);
        Guarantee guarantee = guaranteeWritten
                .or(() -> Guarantee.fromManifestName(keys.key("guarantee").textDefault()))
                .orElseThrow();
        CommitBatch commitBatch = s.get("commitBatch")
                .map(value -> mappings.commitBatch(value, s.path("commitBatch")))
                .orElse(CommitBatch.DEFAULT);
        Optional<Duration> transactionTimeout = keys.duration(s, "transactionTimeout");
        BreakerSettings breaker = s.get("breaker")
                .map(value -> mappings.breaker(value, s.path("breaker")))
                .orElse(BreakerSettings.DEFAULT);
        Optional<BatchLimits> batch = s.get("batch").map(value -> mappings.batch(value, s.path("batch")));
        Map<String, String> config = s.get("config")
                .map(value -> values.config(value, s.path("config")))
                .orElse(Map.of());

        rules.checkGuaranteeAndDeadLetterOptions(s, type, guarantee, guaranteeWritten.isPresent());
        if (guarantee == Guarantee.EXACTLY_ONCE) {
            rules.checkTransactionTimeout(s, transactionTimeout, handlerTimeout, commitBatch);
        }
        rules.checkRedriveRate(s, hold);
        rules.checkMaxRetryDelay(s, ackTimeout, maxRetryDelay);
        rules.checkOrder(s, type, order);
        rules.checkDurableDelays(s, type, durableDelays, topicsPattern.isPresent());
        deadLetterTopic.ifPresent(dlq -> rules.checkNotConsumed(s, dlq, topics, topicsPattern));
        rules.checkRuleDelaysAgainstAckTimeout(s, ackTimeout, onException);
        functionSettings.window().ifPresent(window -> rules.checkWindow(s, window, ackTimeout, maxPendingOutputs));
        rules.checkHandlerOrFunction(s);

        if (reader.problemCount() != before || name.isEmpty() || jar.isEmpty()) {
            return Optional.empty();
        }
        Optional<DeadLetter> deadLetter = deadLetterTopic.map(topic -> new DeadLetter(
                maxAttempts.getAsInt(),
                topic.toString(),
                deadLetterSubscription.isPresent()
                        ? deadLetterSubscription.filter(subscription -> !subscription.equals(NONE))
                        : Optional.of(DeadLetter.defaultSubscription(name.get())),
                deadLetterStackTrace,
                hold
                        ? Optional.of(new HoldForFix(HoldForFix.topicFor(topic.toString(), name.get()), redriveRate))
                        : Optional.empty()));
        Topics consumed = topicsPattern.isPresent()
                ? Topics.matching(topicsPattern.get().pattern())
                : Topics.named(topics.stream().map(TopicName::toString).toList());
        return Optional.of(new SubscriptionSpec(
                name.get(),
                consumed,
                type,
                function.isPresent()
                        ? new HandlerSource(function, jar.get(), schema, true, jarPackage)
                        : new HandlerSource(handler, jar.get(), schema, false, jarPackage),
                new ConsumerOptions(ackTimeout, receiverQueueSize, initialPosition, batchIndexAck),
                deadLetter,
                new Retries(
                        maxRetryDelay,
                        failureBackoff,
                        order,
                        keyHoldTimeout,
                        durableDelays
                                ? Optional.of(new DurableDelays(
                                        DurableDelays.topicFor(topics.get(0).toString(), name.get()), durableAfter))
                                : Optional.empty()),
                concurrency,
                handlerTimeout,
                config,
                function.isPresent() ? functionSettings : FunctionSettings.NONE,
                onException,
                outputOptions,
                guarantee,
                commitBatch,
                journal
                        ? Optional.of(journalTopic.map(TopicName::toString).orElseGet(consumed::defaultJournalTopic))
                        : Optional.empty(),
                breaker,
                batch,
                journalPerHandling && journal,
                transactionTimeout));
    }
}
