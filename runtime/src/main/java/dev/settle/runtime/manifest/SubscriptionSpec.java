package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One validated subscription of the manifest, grouped by meaning so that a state the validator forbids (a cap
 * without a dead-letter topic, topics and a pattern at once) cannot be built. Paths are absolute.
 *
 * @param name the Pulsar subscription name, unique in the manifest
 * @param topics what is consumed
 * @param type the subscription type
 * @param handler where the code comes from and how payloads are decoded for it
 * @param consumer the settings the Pulsar consumer is built with
 * @param deadLetter the dead-letter cap; empty for none (a failing message is retried forever)
 * @param retries how long messages wait before they come back
 * @param concurrency handler calls in flight at once, at least 1; messages with the same key stay in order
 * @param handlerTimeout a call's lease from its start: past it (unless extended) it is interrupted and settled as a
 *     timeout failure
 * @param config string settings handed to the handler (a function's user config)
 * @param function a function's output and secrets; {@link FunctionSettings#NONE} for a handler
 * @param onException exceptions settled otherwise than as failures, first match wins
 * @param outputs how the subscription's outputs are sent
 * @param guarantee whether a delivery's outputs and acknowledgement are one transaction (exactly-once)
 * @param commitBatch how exactly-once deliveries are grouped into transactions; unused at at-least-once
 * @param journal the topic each settled delivery's record is written to ({@code journal: true}); empty when off
 * @param breaker the outage circuit breaker's settings ({@link BreakerSettings#DEFAULT}: on)
 * @param batch the manifest's {@code batch:} limits, as written; empty for none (a batch handler then gathers up to
 *     {@link BatchLimits#DEFAULT}, see {@link #batchLimits()})
 * @param journalPerHandling whether the journal also records each handler call as it begins ({@code
 *     journalPerHandling: true}); by default a settlement's record carries its handling
 * @param transactionTimeout the manifest's {@code transactionTimeout}, after which the coordinator aborts an
 *     exactly-once transaction not committed yet; empty for the default ({@code handlerTimeout} +
 *     {@code commitBatch.maxDelay} + 30 s); unused at at-least-once
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API"), as the test kit
 * takes it ({@code SettleTestDriver.forHandler}, {@code forFunction}), built with {@link #builder}.
 */
public record SubscriptionSpec(
        String name,
        Topics topics,
        SubscriptionKind type,
        HandlerSource handler,
        ConsumerOptions consumer,
        Optional<DeadLetter> deadLetter,
        Retries retries,
        int concurrency,
        Duration handlerTimeout,
        Map<String, String> config,
        FunctionSettings function,
        List<ExceptionRule> onException,
        OutputOptions outputs,
        Guarantee guarantee,
        CommitBatch commitBatch,
        Optional<String> journal,
        BreakerSettings breaker,
        Optional<BatchLimits> batch,
        boolean journalPerHandling,
        Optional<Duration> transactionTimeout) {

    /** {@code type}: Shared, the type on which the redelivery count (and so the dead-letter cap) works. */
    public static final SubscriptionKind DEFAULT_TYPE = SubscriptionKind.SHARED;
    /** {@code concurrency}: one handler call at a time. */
    public static final int DEFAULT_CONCURRENCY = 1;
    /** {@code handlerTimeout}: a call still running this long after its start (unless extended) is given up. */
    public static final Duration DEFAULT_HANDLER_TIMEOUT = Duration.ofSeconds(60);
    /**
     * The least a written {@code transactionTimeout} leaves past {@code handlerTimeout} + {@code commitBatch.maxDelay}:
     * the time a transaction has, after its last call may end, to store the outputs, acknowledge and commit.
     */
    public static final Duration MIN_COMMIT_MARGIN = Duration.ofSeconds(1);

    public SubscriptionSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(topics, "topics");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(deadLetter, "deadLetter");
        Objects.requireNonNull(retries, "retries");
        Objects.requireNonNull(handlerTimeout, "handlerTimeout");
        config = Map.copyOf(config);
        Objects.requireNonNull(function, "function");
        onException = List.copyOf(onException);
        Objects.requireNonNull(outputs, "outputs");
        Objects.requireNonNull(guarantee, "guarantee");
        Objects.requireNonNull(commitBatch, "commitBatch");
        Objects.requireNonNull(journal, "journal");
        Objects.requireNonNull(breaker, "breaker");
        Objects.requireNonNull(batch, "batch");
        Objects.requireNonNull(transactionTimeout, "transactionTimeout");
        if (transactionTimeout.isPresent()
                && transactionTimeout
                                .get()
                                .compareTo(handlerTimeout
                                        .plus(commitBatch.maxDelay())
                                        .plus(MIN_COMMIT_MARGIN))
                        < 0) {
            throw new IllegalArgumentException("transactionTimeout " + transactionTimeout.get()
                    + " leaves less than " + MIN_COMMIT_MARGIN + " past handlerTimeout " + handlerTimeout
                    + " + commitBatch.maxDelay " + commitBatch.maxDelay() + " to commit in");
        }
        if (deadLetter.isPresent() && !type.countsRedeliveries()) {
            throw new IllegalArgumentException("a dead-letter cap on " + type.manifestName() + " would never fire");
        }
        if (retries.order().orElse(RetryOrder.NONE) == RetryOrder.KEY && !type.countsRedeliveries()) {
            throw new IllegalArgumentException("order: key on " + type.manifestName()
                    + ": a retry there rewinds every unacknowledged message, which keeps the order already");
        }
        if (retries.durableDelays().isPresent()
                && (!type.countsRedeliveries() || topics.pattern().isPresent())) {
            throw new IllegalArgumentException("durable delays on " + type.manifestName() + " over " + topics
                    + ": the broker delays delivery on Shared and Key_Shared only, and the delay topic must be told"
                    + " apart from the consumed topics by name");
        }
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency below 1: " + concurrency);
        }
        if (journalPerHandling && journal.isEmpty()) {
            throw new IllegalArgumentException("per-handling journal records without a journal");
        }
    }

    /**
     * Whether acknowledgements go out at once rather than in the client's 100 ms groups: with batch-index
     * acknowledgement and a dead-letter cap, an ack still waiting in its group when a retry comes back sends an
     * acknowledged sibling of the batch to the dead-letter topic too (the client decides from the batch as the
     * broker last sent it).
     */
    public boolean acknowledgesAtOnce() {
        return consumer.batchIndexAck() && deadLetter.isPresent();
    }

    /**
     * Whether a retry here holds its key's later messages behind it in the runtime (docs/concepts.md, "Key-ordered
     * retries"): {@code order: key}, or no {@code order} on a Key_Shared subscription.
     */
    public boolean keyOrderedRetries() {
        return retries.orderOn(type) == RetryOrder.KEY;
    }

    /** How a batch handler's deliveries are gathered: the manifest's {@code batch:}, else the defaults. */
    public BatchLimits batchLimits() {
        return batch.orElse(BatchLimits.DEFAULT);
    }

    /** A subscription built in code (tests, embedded use), every optional setting at its default. */
    public static Builder builder(String name, List<String> topics) {
        return new Builder(name, Topics.named(topics));
    }

    /** A builder holding this subscription's settings, to change some of them. */
    public Builder toBuilder() {
        Builder builder = new Builder(name, topics);
        builder.type = type;
        builder.handler = handler;
        builder.consumer = consumer;
        builder.deadLetter = deadLetter;
        builder.retries = retries;
        builder.concurrency = concurrency;
        builder.handlerTimeout = handlerTimeout;
        builder.config = config;
        builder.function = function;
        builder.onException = onException;
        builder.outputs = outputs;
        builder.guarantee = guarantee;
        builder.commitBatch = commitBatch;
        builder.journal = journal;
        builder.breaker = breaker;
        builder.batch = batch;
        builder.journalPerHandling = journalPerHandling;
        builder.transactionTimeout = transactionTimeout;
        return builder;
    }

    /** Builds a {@link SubscriptionSpec}; what the constructor refuses, {@link #build()} refuses. */
    public static final class Builder {
        private String name;
        private Topics topics;
        private SubscriptionKind type = DEFAULT_TYPE;
        private HandlerSource handler = new HandlerSource(Optional.empty(), Path.of("handler.jar"), Optional.empty());
        private ConsumerOptions consumer = ConsumerOptions.DEFAULT;
        private Optional<DeadLetter> deadLetter = Optional.empty();
        private Retries retries = Retries.DEFAULT;
        private int concurrency = DEFAULT_CONCURRENCY;
        private Duration handlerTimeout = DEFAULT_HANDLER_TIMEOUT;
        private Map<String, String> config = Map.of();
        private FunctionSettings function = FunctionSettings.NONE;
        private List<ExceptionRule> onException = List.of();
        private OutputOptions outputs = OutputOptions.DEFAULT;
        private Guarantee guarantee = Guarantee.AT_LEAST_ONCE;
        private CommitBatch commitBatch = CommitBatch.DEFAULT;
        private Optional<String> journal = Optional.empty();
        private BreakerSettings breaker = BreakerSettings.DEFAULT;
        private Optional<BatchLimits> batch = Optional.empty();
        private boolean journalPerHandling;
        private Optional<Duration> transactionTimeout = Optional.empty();

        private Builder(String name, Topics topics) {
            this.name = name;
            this.topics = topics;
        }

        public Builder name(String value) {
            name = value;
            return this;
        }

        public Builder topicsPattern(String pattern) {
            topics = Topics.matching(pattern);
            return this;
        }

        public Builder type(SubscriptionKind value) {
            type = value;
            return this;
        }

        public Builder handler(HandlerSource value) {
            handler = value;
            return this;
        }

        public Builder jar(Path jar) {
            handler = new HandlerSource(handler.className(), jar, handler.schema(), handler.function());
            return this;
        }

        public Builder consumer(ConsumerOptions value) {
            consumer = value;
            return this;
        }

        /** The ack timeout; {@code null} for none. */
        public Builder ackTimeout(Duration timeout) {
            consumer = consumer.withAckTimeout(Optional.ofNullable(timeout));
            return this;
        }

        public Builder batchIndexAck(boolean enabled) {
            consumer = consumer.withBatchIndexAck(enabled);
            return this;
        }

        /** A cap of {@code maxAttempts} to {@code topic}, with the default initial subscription. */
        public Builder deadLetter(int maxAttempts, String topic) {
            deadLetter =
                    Optional.of(new DeadLetter(maxAttempts, topic, Optional.of(DeadLetter.defaultSubscription(name))));
            return this;
        }

        public Builder deadLetter(Optional<DeadLetter> value) {
            deadLetter = value;
            return this;
        }

        public Builder retries(Retries value) {
            retries = value;
            return this;
        }

        public Builder failureBackoff(Optional<FailureBackoff> backoff) {
            retries = retries.withFailureBackoff(backoff);
            return this;
        }

        /** Whether a retry holds its key's later messages behind it; {@code null} for the type's default. */
        public Builder order(RetryOrder value) {
            retries = new Retries(
                    retries.maxRetryDelay(),
                    retries.failureBackoff(),
                    Optional.ofNullable(value),
                    retries.keyHoldTimeout(),
                    retries.durableDelays());
            return this;
        }

        public Builder keyHoldTimeout(Duration timeout) {
            retries = new Retries(
                    retries.maxRetryDelay(),
                    retries.failureBackoff(),
                    retries.order(),
                    timeout,
                    retries.durableDelays());
            return this;
        }

        /** Keeps waits of at least {@code after} on the subscription's delay topic ({@code durableDelays: true}). */
        public Builder durableDelays(Duration after) {
            retries = retries.withDurableDelays(Optional.of(
                    new DurableDelays(DurableDelays.topicFor(topics.names().get(0), name), after)));
            return this;
        }

        public Builder concurrency(int calls) {
            concurrency = calls;
            return this;
        }

        public Builder handlerTimeout(Duration timeout) {
            handlerTimeout = timeout;
            return this;
        }

        public Builder config(Map<String, String> values) {
            config = values;
            return this;
        }

        /** A Pulsar Function's class (in the JAR set with {@link #jar}) and its settings. */
        public Builder function(String className, FunctionSettings settings) {
            handler = new HandlerSource(Optional.of(className), handler.jar(), handler.schema(), true);
            function = settings;
            return this;
        }

        public Builder onException(List<ExceptionRule> rules) {
            onException = rules;
            return this;
        }

        public Builder outputs(OutputOptions value) {
            outputs = value;
            return this;
        }

        public Builder guarantee(Guarantee value) {
            guarantee = value;
            return this;
        }

        public Builder commitBatch(CommitBatch value) {
            commitBatch = value;
            return this;
        }

        /**
         * The exactly-once transactions' timeout; {@code null} for the default ({@code handlerTimeout} +
         * {@code commitBatch.maxDelay} + 30 s).
         */
        public Builder transactionTimeout(Duration timeout) {
            transactionTimeout = Optional.ofNullable(timeout);
            return this;
        }

        /** Journals each settled delivery to {@code topic}; empty turns the journal off. */
        public Builder journal(Optional<String> topic) {
            journal = topic;
            return this;
        }

        /** Whether the journal also records each handler call as it begins; needs {@link #journal}. */
        public Builder journalPerHandling(boolean value) {
            journalPerHandling = value;
            return this;
        }

        /** The outage circuit breaker's settings; {@link BreakerSettings#OFF} turns it off. */
        public Builder breaker(BreakerSettings value) {
            breaker = value;
            return this;
        }

        /** Gathers a batch handler's deliveries up to {@code limits}. */
        public Builder batch(BatchLimits limits) {
            batch = Optional.of(limits);
            return this;
        }

        public SubscriptionSpec build() {
            return new SubscriptionSpec(
                    name,
                    topics,
                    type,
                    handler,
                    consumer,
                    deadLetter,
                    retries,
                    concurrency,
                    handlerTimeout,
                    config,
                    function,
                    onException,
                    outputs,
                    guarantee,
                    commitBatch,
                    journal,
                    breaker,
                    batch,
                    journalPerHandling,
                    transactionTimeout);
        }
    }
}
