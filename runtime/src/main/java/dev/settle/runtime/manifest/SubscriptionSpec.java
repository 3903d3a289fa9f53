package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * One validated subscription of the manifest. Defaults are those of {@link Defaults}; paths are absolute.
 *
 * @param name the Pulsar subscription name
 * @param topics the consumed topics, fully qualified; empty when {@code topicsPattern} is set
 * @param topicsPattern a regular expression over topic names, instead of {@code topics}
 * @param type the subscription type
 * @param handler the handler's class name; empty when the JAR declares exactly one
 * @param jar the handler JAR, or a folder of JARs, resolved against the manifest's folder
 * @param schema a schema override; empty to derive it from the handler's type argument
 * @param ackTimeout the consumer's ack timeout; empty for none
 * @param maxAttempts deliveries before a failing message is dead-lettered; present with {@code deadLetterTopic}
 * @param deadLetterTopic where capped messages go; present with {@code maxAttempts}
 * @param deadLetterSubscription the dead-letter topic's initial subscription, so dead letters are retained
 * @param maxRetryDelay the longest {@code retryAfter} the handler declares it will ask for
 * @param concurrency handler calls in flight at once; messages with the same key stay in order
 * @param receiverQueueSize the consumer's receiver queue
 * @param initialPosition where a new subscription starts
 * @param handlerTimeout how long one handler call may run before the runtime reports itself not live
 * @param batchIndexAck whether the broker has {@code acknowledgmentAtBatchIndexLevelEnabled}
 * @param config string settings handed to the handler
 */
public record SubscriptionSpec(
        String name,
        List<String> topics,
        Optional<String> topicsPattern,
        SubscriptionKind type,
        Optional<String> handler,
        Path jar,
        Optional<SchemaKind> schema,
        Optional<Duration> ackTimeout,
        OptionalInt maxAttempts,
        Optional<String> deadLetterTopic,
        Optional<String> deadLetterSubscription,
        Optional<Duration> maxRetryDelay,
        int concurrency,
        int receiverQueueSize,
        InitialPosition initialPosition,
        Duration handlerTimeout,
        boolean batchIndexAck,
        Map<String, String> config) {

    public SubscriptionSpec {
        Objects.requireNonNull(name, "name");
        topics = List.copyOf(topics);
        Objects.requireNonNull(topicsPattern, "topicsPattern");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(jar, "jar");
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(ackTimeout, "ackTimeout");
        Objects.requireNonNull(maxAttempts, "maxAttempts");
        Objects.requireNonNull(deadLetterTopic, "deadLetterTopic");
        Objects.requireNonNull(deadLetterSubscription, "deadLetterSubscription");
        Objects.requireNonNull(maxRetryDelay, "maxRetryDelay");
        Objects.requireNonNull(initialPosition, "initialPosition");
        Objects.requireNonNull(handlerTimeout, "handlerTimeout");
        config = Map.copyOf(config);
    }

    /** A subscription with every optional setting at its default, for tests and programmatic use. */
    public static SubscriptionSpec of(String name, List<String> topics, SubscriptionKind type, Path jar) {
        return new SubscriptionSpec(
                name,
                topics,
                Optional.empty(),
                type,
                Optional.empty(),
                jar,
                Optional.empty(),
                Optional.empty(),
                OptionalInt.empty(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Defaults.CONCURRENCY,
                Defaults.RECEIVER_QUEUE_SIZE,
                Defaults.INITIAL_POSITION,
                Defaults.HANDLER_TIMEOUT,
                Defaults.BATCH_INDEX_ACK,
                Map.of());
    }

    public SubscriptionSpec withAckTimeout(Duration timeout) {
        return new SubscriptionSpec(name, topics, topicsPattern, type, handler, jar, schema,
                Optional.ofNullable(timeout), maxAttempts, deadLetterTopic, deadLetterSubscription, maxRetryDelay,
                concurrency, receiverQueueSize, initialPosition, handlerTimeout, batchIndexAck, config);
    }

    public SubscriptionSpec withDeadLetter(int attempts, String topic) {
        return new SubscriptionSpec(name, topics, topicsPattern, type, handler, jar, schema, ackTimeout,
                OptionalInt.of(attempts), Optional.of(topic), deadLetterSubscription, maxRetryDelay,
                concurrency, receiverQueueSize, initialPosition, handlerTimeout, batchIndexAck, config);
    }

    public SubscriptionSpec withConcurrency(int calls) {
        return new SubscriptionSpec(name, topics, topicsPattern, type, handler, jar, schema, ackTimeout,
                maxAttempts, deadLetterTopic, deadLetterSubscription, maxRetryDelay,
                calls, receiverQueueSize, initialPosition, handlerTimeout, batchIndexAck, config);
    }

    public SubscriptionSpec withBatchIndexAck(boolean enabled) {
        return new SubscriptionSpec(name, topics, topicsPattern, type, handler, jar, schema, ackTimeout,
                maxAttempts, deadLetterTopic, deadLetterSubscription, maxRetryDelay,
                concurrency, receiverQueueSize, initialPosition, handlerTimeout, enabled, config);
    }

    /**
     * Whether acknowledgements go out at once rather than in the client's 100 ms groups: with batch-index
     * acknowledgement and a dead-letter cap, an ack still waiting in its group when a retry comes back sends an
     * acknowledged sibling of the batch to the dead-letter topic too (the client decides from the batch as the
     * broker last sent it).
     */
    public boolean acknowledgesAtOnce() {
        return batchIndexAck && maxAttempts.isPresent();
    }

    /** The dead-letter topic's initial subscription: the declared one, or {@link Defaults#deadLetterSubscription}. */
    public Optional<String> effectiveDeadLetterSubscription() {
        return deadLetterTopic.map(topic -> deadLetterSubscription.orElse(Defaults.deadLetterSubscription(name)));
    }
}
