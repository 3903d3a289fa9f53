package dev.settle.runtime.manifest;

import static dev.settle.runtime.manifest.KeyRow.key;
import static dev.settle.runtime.manifest.ManifestKey.Level.BATCH;
import static dev.settle.runtime.manifest.ManifestKey.Level.BREAKER;
import static dev.settle.runtime.manifest.ManifestKey.Level.COMMIT_BATCH;
import static dev.settle.runtime.manifest.ManifestKey.Level.EXCEPTION_RULE;
import static dev.settle.runtime.manifest.ManifestKey.Level.FAILURE_BACKOFF;
import static dev.settle.runtime.manifest.ManifestKey.Level.OUTPUT;
import static dev.settle.runtime.manifest.ManifestKey.Level.SUBSCRIPTION;
import static dev.settle.runtime.manifest.ManifestKey.Level.WINDOW;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.BOOLEAN;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.BOOLEAN_OR_TOPIC;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.CLASS_NAME;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.DURATION;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.DURATION_OR_ZERO;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.ENUM;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.INTEGER;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.LIST;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.MAPPING;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.MAPPING_OR_NONE;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.NUMBER;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.PATH;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.REFUSED;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.SIZE;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.STRING;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.TOPIC;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.TOPICS;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.TOPIC_OR_MAPPING;

import dev.settle.runtime.manifest.ManifestKey.Reload;
import java.util.Arrays;
import java.util.List;

/**
 * The rows of {@link ManifestKeys}' table for a subscription: {@code subscriptions[]} and the mappings inside it
 * (failure backoff, outputs, commit batches, the breaker, batches, windows, exception rules). A reload that changes
 * one restarts that subscription, unless its row says otherwise.
 */
final class SubscriptionKeys {
    private static final String MULTIPLIER =
            "must be a number from 1 to 100, such as 2 or 1.5, was '%s'; 1 waits the same after every failure";

    /** The rows, in the order problems list them. */
    static final List<KeyRow> ROWS = List.of(
            key(SUBSCRIPTION, "name", STRING)
                    .required()
                    .reload(Reload.REPLACES_SUBSCRIPTION)
                    .doc("the Pulsar subscription name, unique in the manifest"),
            key(SUBSCRIPTION, "topics", TOPICS).doc("the consumed topics"),
            key(SUBSCRIPTION, "topicsPattern", STRING).doc("a regular expression over the topics of one namespace"),
            key(SUBSCRIPTION, "type", ENUM)
                    .allowed(Arrays.stream(SubscriptionKind.values())
                            .map(SubscriptionKind::manifestName)
                            .toList())
                    .byDefault("Shared")
                    .doc("the subscription type, spelled as Pulsar spells it"),
            key(SUBSCRIPTION, "handler", CLASS_NAME)
                    .computed("the one the JAR declares")
                    .reload(Reload.SWAPS_CODE)
                    .doc("the handler's class"),
            key(SUBSCRIPTION, "jar", PATH)
                    .required()
                    .reload(Reload.SWAPS_CODE)
                    .doc("the handler JAR, a folder of JARs, or a Pulsar package"),
            key(SUBSCRIPTION, "schema", ENUM)
                    .allowed(schemas())
                    .computed("from the handler's type argument")
                    .doc("how the payload is decoded"),
            key(SUBSCRIPTION, "ackTimeout", DURATION)
                    .atLeast(
                            "1s",
                            "must be at least 1s (the Pulsar client's floor), was '%s'; remove it for no ack"
                                    + " timeout")
                    .doc("how long a message may stay unsettled before the client asks for it again"),
            key(SUBSCRIPTION, "maxAttempts", INTEGER)
                    .atLeast(2, "; the Pulsar client needs maxRedeliverCount (maxAttempts - 1) above 0")
                    .doc("deliveries of a failing message before it is dead-lettered"),
            key(SUBSCRIPTION, "deadLetterTopic", TOPIC).doc("where a message goes after maxAttempts deliveries"),
            key(SUBSCRIPTION, "deadLetterSubscription", STRING)
                    .computed("`<name>-dlq`")
                    .doc("the dead-letter topic's initial subscription; none for no subscription"),
            key(SUBSCRIPTION, "deadLetterStackTrace", BOOLEAN)
                    .byDefault("true")
                    .doc("whether Settle's dead letters carry the failure's stack trace"),
            key(SUBSCRIPTION, "onCap", ENUM)
                    .allowed("deadLetter", "hold")
                    .byDefault("deadLetter")
                    .doc("hold: a capped message waits in <name>-held for a new generation of the code"),
            key(SUBSCRIPTION, "redriveRate", INTEGER)
                    .byDefault(String.valueOf(HoldForFix.DEFAULT_REDRIVE_PER_SECOND))
                    .atLeast(1)
                    .doc("held messages sent back a second at most; only with onCap: hold"),
            key(SUBSCRIPTION, "maxRetryDelay", DURATION).doc("the longest retryAfter the handler asks for"),
            key(SUBSCRIPTION, "failureBackoff", MAPPING_OR_NONE)
                    .computed("`{initial: 100ms, multiplier: 2, max: 30s}`")
                    .doc("how long a failed message waits before it comes back"),
            key(SUBSCRIPTION, "order", ENUM)
                    .allowed(Arrays.stream(RetryOrder.values())
                            .map(RetryOrder::manifestName)
                            .toList())
                    .computed("`key` on `Key_Shared`, `none` on the others")
                    .doc("key: a retry holds its key's later messages behind it in the runtime"),
            key(SUBSCRIPTION, "keyHoldTimeout", DURATION)
                    .byDefault("10s")
                    .doc("how long past a retry's delay its key waits for it; only with order key"),
            key(SUBSCRIPTION, "durableDelays", BOOLEAN)
                    .byDefault("false")
                    .doc("true: a long retryAfter or failure backoff waits in <name>-delay, surviving a crash"),
            key(SUBSCRIPTION, "durableAfter", DURATION)
                    .byDefault("5s")
                    .doc("the shortest wait kept in <name>-delay; only with durableDelays: true"),
            key(SUBSCRIPTION, "concurrency", INTEGER)
                    .byDefault("1")
                    .atLeast(1)
                    .doc("handler calls in flight at once; the same key stays in order"),
            key(SUBSCRIPTION, "maxPendingOutputs", INTEGER)
                    .byDefault("1000")
                    .atLeast(1)
                    .doc("outputs sent and not yet stored at once"),
            // 0 is refused although Pulsar allows it: a zero-queue consumer fails on batched messages and
            // cannot
            // consume several topics, and the driver needs prefetch to keep `concurrency` calls busy.
            key(SUBSCRIPTION, "receiverQueueSize", INTEGER)
                    .byDefault("1000")
                    .atLeast(1)
                    .doc("the consumer's receiver queue (prefetch)"),
            key(SUBSCRIPTION, "initialPosition", ENUM)
                    .allowed("earliest", "latest")
                    .byDefault("earliest")
                    .doc("where a new subscription starts"),
            key(SUBSCRIPTION, "handlerTimeout", DURATION)
                    .byDefault("60s")
                    .doc("a call's lease: a call still running past it is interrupted and settled as a timeout"
                            + " failure; Delivery.extend moves it")
                    .changed(
                            "0.1.0",
                            "a call still running past it is interrupted and settled as a timeout failure"
                                    + " (before, it only failed /livez); a longer call needs"
                                    + " delivery.extend(duration) or a larger handlerTimeout"),
            key(SUBSCRIPTION, "batchIndexAck", BOOLEAN)
                    .byDefault("false")
                    .doc("true only when the broker acknowledges batch indexes"),
            key(SUBSCRIPTION, "journal", BOOLEAN)
                    .byDefault("false")
                    .doc("write a record of each settled delivery to the journal topic, for settle trace"),
            key(SUBSCRIPTION, "journalTopic", TOPIC)
                    .computed("`settle-journal` in the namespace of the first topic")
                    .doc("where the journal's records go; only with journal: true"),
            key(SUBSCRIPTION, "journalPerHandling", BOOLEAN)
                    .byDefault("false")
                    .doc("also record each handler call as it begins, not only its settlement; only with"
                            + " journal: true"),
            key(SUBSCRIPTION, "guarantee", ENUM)
                    .allowed(Arrays.stream(Guarantee.values())
                            .map(Guarantee::manifestName)
                            .toList())
                    .byDefault("at-least-once")
                    .doc("exactly-once runs each delivery in a Pulsar transaction"),
            key(SUBSCRIPTION, "commitBatch", MAPPING)
                    .computed("`{maxDeliveries: 100, maxDelay: 10ms}`")
                    .doc("how exactly-once deliveries are grouped into transactions"),
            key(SUBSCRIPTION, "transactionTimeout", DURATION)
                    .computed("`handlerTimeout` + `commitBatch.maxDelay` + 30s")
                    .doc("after it the coordinator aborts an exactly-once transaction not committed yet"),
            key(SUBSCRIPTION, "breaker", MAPPING)
                    .computed("`{enabled: true, minKeys: 5, window: 2s, maxProbeInterval: 2s}`")
                    .doc("pauses receiving during a dependency's outage instead of spending attempts"),
            key(SUBSCRIPTION, "batch", MAPPING)
                    .computed("`{maxMessages: 100, maxBytes: 1MiB, maxWait: 20ms}`")
                    .doc("how a batch handler's deliveries are gathered into one call"),
            key(SUBSCRIPTION, "config", MAPPING).reload(Reload.SWAPS_CODE).doc("settings handed to the handler"),
            key(SUBSCRIPTION, "function", CLASS_NAME).doc("a Pulsar Function to run instead of a handler"),
            key(SUBSCRIPTION, "output", TOPIC_OR_MAPPING)
                    .doc("where a function's return values go, or the output producers' settings"),
            key(SUBSCRIPTION, "outputSchema", ENUM)
                    .allowed(schemas())
                    .computed("from the function's output type")
                    .doc("the schema of output"),
            key(SUBSCRIPTION, "secrets", MAPPING).doc("secret names to the environment variables holding them"),
            key(SUBSCRIPTION, "inputSerdes", MAPPING).doc("a SerDe class for each consumed topic"),
            key(SUBSCRIPTION, "outputSerde", CLASS_NAME).doc("the SerDe class that serialises return values"),
            key(SUBSCRIPTION, "inputProperties", BOOLEAN)
                    .byDefault("true")
                    .doc("whether outputs carry the input's topic and message id"),
            key(SUBSCRIPTION, "state", BOOLEAN_OR_TOPIC).doc("the compacted topic a function's state is kept in"),
            key(SUBSCRIPTION, "instanceId", INTEGER)
                    .byDefault("0")
                    .atLeast(0)
                    .doc("what context.getInstanceId() returns"),
            key(SUBSCRIPTION, "numInstances", INTEGER)
                    .byDefault("1")
                    .atLeast(1)
                    .doc("what context.getNumInstances() returns"),
            key(SUBSCRIPTION, "windowConfig", MAPPING).doc("windows of messages, in processing time"),
            key(SUBSCRIPTION, "onException", LIST).doc("exceptions settled otherwise than as failures"),
            key(FAILURE_BACKOFF, "initial", DURATION).byDefault("100ms").doc("the wait after the first attempt"),
            key(FAILURE_BACKOFF, "multiplier", NUMBER)
                    .byDefault("2")
                    .atLeast("1", MULTIPLIER)
                    .atMost("100", MULTIPLIER)
                    .doc("how much longer each next wait is"),
            key(FAILURE_BACKOFF, "max", DURATION).byDefault("30s").doc("the longest wait"),
            key(OUTPUT, "topic", TOPIC).doc("where a function's return values are published"),
            key(OUTPUT, "batching", BOOLEAN).byDefault("true").doc("whether output producers batch"),
            key(OUTPUT, "batchingMaxDelay", DURATION).byDefault("10ms").doc("the longest a batch waits"),
            key(OUTPUT, "compression", ENUM)
                    .allowed(OutputOptions.Compression.manifestNames())
                    .byDefault("lz4")
                    .doc("the output producers' compression"),
            key(OUTPUT, "maxPendingMessages", INTEGER)
                    .byDefault("0")
                    .atLeast(0, " (0 leaves it to the client's memory limit)")
                    .doc("the output producers' pending messages; 0: the client's own"),
            key(COMMIT_BATCH, "maxDeliveries", INTEGER)
                    .byDefault("100")
                    .atLeast(1, "; write 1 for one transaction per delivery")
                    .atMost(
                            CommitBatch.MAX_DELIVERIES,
                            "must be at most 10000, was '%s': a transaction's acknowledgements go to the broker in"
                                    + " one request. Lower it to 10000 or less")
                    .doc("deliveries one transaction takes at most"),
            key(COMMIT_BATCH, "maxDelay", DURATION_OR_ZERO)
                    .byDefault("10ms")
                    .atMost(
                            "1s",
                            "must be at most 1s, was '%s': a transaction held open longer only adds latency (every"
                                    + " delivery in it waits for its commit). Shorten it to 1s or less")
                    .doc("how long a transaction stays open after its first delivery"),
            key(BREAKER, "enabled", BOOLEAN).byDefault("true").doc("whether the breaker runs"),
            key(BREAKER, "minKeys", INTEGER)
                    .byDefault("5")
                    .atLeast(1)
                    .doc("distinct keys failing with a dependency's cause that open it"),
            key(BREAKER, "window", DURATION).byDefault("2s").doc("how far back failures are counted"),
            key(BREAKER, "maxProbeInterval", DURATION)
                    .byDefault("2s")
                    .doc("the longest wait between two probes while open"),
            key(BREAKER, "exceptions", LIST).doc("further exception classes that name a dependency's failure"),
            key(BATCH, "maxMessages", INTEGER)
                    .byDefault("100")
                    .atLeast(1)
                    .atMost(
                            BatchLimits.MAX_MESSAGES,
                            "must be at most 10000, was '%s': every message of a batch holds a permit and its"
                                    + " payload in memory until the batch is settled. Lower it to 10000 or less")
                    .doc("messages one batch call takes at most"),
            key(BATCH, "maxBytes", SIZE).byDefault("1MiB").doc("payload bytes one batch call takes at most"),
            key(BATCH, "maxWait", DURATION_OR_ZERO)
                    .byDefault("20ms")
                    .atMost(
                            "10s",
                            "must be at most 10s, was '%s': a batch held open longer only adds latency (its"
                                    + " first message waits for it). Shorten it to 10s or less")
                    .doc("how long a batch waits for more messages after its first"),
            key(WINDOW, "windowLengthCount", INTEGER).atLeast(1).doc("a count window's length, in messages"),
            key(WINDOW, "windowLengthDurationMs", INTEGER).atLeast(1).doc("a time window's length, in ms"),
            key(WINDOW, "slidingIntervalCount", INTEGER).atLeast(1).doc("a count window's slide"),
            key(WINDOW, "slidingIntervalDurationMs", INTEGER).atLeast(1).doc("a time window's slide, in ms"),
            // Functions' WindowConfig keys Settle refuses, each saying why.
            key(WINDOW, "timestampExtractorClassName", REFUSED)
                    .doc("event-time windows are not built: Settle's windows are in processing time (a message falls"
                            + " in the window it is received in); remove it"),
            key(WINDOW, "lateDataTopic", REFUSED)
                    .doc("late data needs event time, which Settle's windows do not have (they are in processing"
                            + " time); remove it"),
            key(WINDOW, "maxLagMs", REFUSED)
                    .doc("a watermark's lag needs event time, which Settle's windows do not have; remove it"),
            key(WINDOW, "watermarkEmitIntervalMs", REFUSED)
                    .doc("watermarks need event time, which Settle's windows do not have; remove it"),
            key(WINDOW, "actualWindowFunctionClassName", REFUSED)
                    .doc("the window function is the subscription's function: key; remove it"),
            key(WINDOW, "processingGuarantees", REFUSED)
                    .doc("a window's inputs are always acknowledged once its output is stored (at-least-once);"
                            + " remove it"),
            key(EXCEPTION_RULE, "type", CLASS_NAME).required().doc("an exception class, with its subclasses"),
            key(EXCEPTION_RULE, "outcome", STRING).required().doc("drop, retry or retryAfter <duration>"));

    private SubscriptionKeys() {}

    private static List<String> schemas() {
        return Arrays.stream(SchemaKind.values()).map(SchemaKind::manifestName).toList();
    }
}
