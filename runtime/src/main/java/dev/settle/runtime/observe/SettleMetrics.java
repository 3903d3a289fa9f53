package dev.settle.runtime.observe;

import dev.settle.runtime.driver.DriverMetrics;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Summary;
import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmCompilationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryPoolAllocationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime's metrics (the README's "Metrics and health"), in a registry of their own, plus the JVM's.
 *
 * <p>Every settlement metric is labelled {@code subscription}; {@code settle_outcomes_total} also {@code outcome}, and
 * {@code generation} while a canary ramp runs (empty, which Prometheus reads as absent, without one).
 * Subscriptions come from the manifest, so the label is bounded; nothing per message (id, key) is ever a label.
 * {@link #forSubscription} creates all of a subscription's series at once, every outcome at 0, so {@code rate()}
 * works from the first scrape and dashboards do not gain series as outcomes first happen.
 *
 * <p>Histograms are classic only: the text exposition that Prometheus scrapes by default carries only classic
 * buckets, the dashboard queries {@code _bucket}, and a native histogram would cost the message path a second
 * structure to update for nothing. Exemplars are off for the same reason (there is no tracer to link to).
 *
 * <p>Thread-safe.
 */
public final class SettleMetrics {
    private static final Logger log = LoggerFactory.getLogger(SettleMetrics.class);

    /** 1 ms to 60 s: fast handlers, slow I/O-bound ones, and calls near a typical handler timeout. */
    static final double[] HANDLER_SECONDS_BUCKETS = {
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
    };

    /** From a few milliseconds behind (keeping up) to an hour (a backlog, a long outage). */
    static final double[] LAG_SECONDS_BUCKETS = {
        0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600
    };

    /** Attempt 1 is the first delivery; caps ({@code maxAttempts}) are usually single digits. */
    static final double[] ATTEMPT_BUCKETS = {1, 2, 3, 5, 10, 20, 50, 100};
    /** A batch handler's calls: single messages (a bisection's end) up to the largest maxMessages. */
    static final double[] BATCH_SIZE_BUCKETS = {1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 10_000};

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Counter deliveries;
    private final Counter outcomes;
    private final Histogram handlerDuration;
    private final Gauge heldRetries;
    private final Gauge inFlight;
    private final Gauge unackedLimitReached;
    private final Gauge heldBehindKey;
    private final Counter keyHoldTimeouts;
    private final Counter keyGaps;
    private final Map<String, DoubleSupplier> keyHoldAges = new ConcurrentHashMap<>();
    private final Gauge breakerState;
    private final Gauge heldForOutage;
    private final Counter deadLettered;
    private final Counter failures;
    private final Counter duplicatesSuppressed;
    private final Histogram deliveryAttempt;
    private final Histogram deliveryLag;
    private final Counter transactions;
    private final Counter httpRefused;
    private final Histogram commitDuration;
    private final Histogram batchSize;
    private final Counter batchSplits;
    private final Counter batchOutcomesMissing;
    private final Gauge callsIgnoringInterrupt;
    private final Counter heldForFix;
    private final Counter redriven;
    private final Counter durableDelaysPublished;
    private final Gauge durableDelaysPending;
    private final Counter durableDelaysRefused;
    private final Gauge buildInfo;
    private final Summary functionMetric;
    private final Map<String, SubscriptionMetrics> bound = new ConcurrentHashMap<>();
    private final Map<String, IntSupplier> receiverQueues = new ConcurrentHashMap<>();
    private final Map<String, BooleanSupplier> connections = new ConcurrentHashMap<>();
    private final Map<String, DrainTime> drains = new ConcurrentHashMap<>();
    private final Map<String, IntSupplier> settingsInForce = new ConcurrentHashMap<>();
    private final Map<String, LongSupplier> journalsDropped = new ConcurrentHashMap<>();

    public SettleMetrics() {
        // JvmMetrics minus JvmNativeMemoryMetrics: that one asks the diagnostic-command MBean at registration,
        // about 0.1 s of CPU on the way to the first message (seen in JFR), to report nothing unless the JVM runs
        // with -XX:NativeMemoryTracking.
        JvmThreadsMetrics.builder().register(registry);
        JvmBufferPoolMetrics.builder().register(registry);
        JvmClassLoadingMetrics.builder().register(registry);
        JvmCompilationMetrics.builder().register(registry);
        JvmGarbageCollectorMetrics.builder().register(registry);
        JvmMemoryPoolAllocationMetrics.builder().register(registry);
        JvmMemoryMetrics.builder().register(registry);
        JvmRuntimeInfoMetric.builder().register(registry);
        ProcessMetrics.builder().register(registry);
        // The 1.x client appends _total to counters itself: the names below are written without it.
        deliveries = Counter.builder()
                .name("settle_deliveries")
                .help("Messages handed to the handler (every attempt counts).")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        outcomes = Counter.builder()
                .name("settle_outcomes")
                .help("Deliveries settled, by how: ack, retry, retry_after, drop, none, error, refused; while a canary"
                        + " ramp runs, by the generation that handled them (empty, so absent, without a ramp).")
                .labelNames("subscription", "generation", "outcome")
                .withoutExemplars()
                .register(registry);
        // A summary, as Pulsar Functions report recordMetric: count and sum per name, no quantiles to configure.
        functionMetric = Summary.builder()
                .name("settle_function_metric")
                .help("Values a Pulsar Function recorded with context.recordMetric(name, value).")
                .labelNames("subscription", "name")
                .register(registry);
        handlerDuration = secondsHistogram(
                "settle_handler_duration_seconds",
                "How long one handler call ran, outcome applied.",
                HANDLER_SECONDS_BUCKETS);
        heldRetries = Gauge.builder()
                .name("settle_held_retries")
                .help("Messages held in the process for retryAfter; they count toward the broker's"
                        + " maxUnackedMessagesPerConsumer.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        inFlight = Gauge.builder()
                .name("settle_in_flight")
                .help("Handler calls running now.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        unackedLimitReached = Gauge.builder()
                .name("settle_unacked_limit_reached")
                .help("1 while the messages held for retryAfter, a failure backoff or behind their key have reached the"
                        + " broker's default"
                        + " maxUnackedMessagesPerConsumer (50000), past which it stops dispatching to the consumer;"
                        + " 0 again below half of it.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        heldBehindKey = Gauge.builder()
                .name("settle_held_behind_key")
                .help(
                        "Messages held in the process behind an earlier message of their key that waits for its retry"
                                + " (order: key); unacknowledged, they count toward the broker's maxUnackedMessagesPerConsumer.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        keyHoldTimeouts = Counter.builder()
                .name("settle_key_hold_timeouts")
                .help("Keys let go because their retried message did not come back within its delay plus"
                        + " keyHoldTimeout: the key's later messages went before it (an inversion).")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        keyGaps = Counter.builder()
                .name("settle_key_gaps")
                .help("Messages of a key-ordered subscription that went to the dead letters: their key went on"
                        + " without them.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        GaugeWithCallback.builder()
                .name("settle_key_hold_oldest_age_seconds")
                .help("How long the oldest key now held behind a retry has been held; 0 when none is.")
                .labelNames("subscription")
                .callback(callback -> keyHoldAges.forEach((subscription, age) -> {
                    try {
                        callback.call(age.getAsDouble(), subscription);
                    } catch (RuntimeException e) {
                        log.debug("subscription '{}': key-hold age unavailable", subscription, e);
                    }
                }))
                .register(registry);
        breakerState = Gauge.builder()
                .name("settle_breaker_state")
                .help("1 for the outage circuit breaker's current state (closed, open, half-open, or off when turned"
                        + " off), 0 for the others; open and half-open mean receiving is paused and failing messages"
                        + " are held without spending attempts.")
                .labelNames("subscription", "state")
                .withoutExemplars()
                .register(registry);
        heldForOutage = Gauge.builder()
                .name("settle_breaker_held_messages")
                .help("Messages the open outage circuit breaker holds unacknowledged, spending no attempts; they count"
                        + " toward the broker's maxUnackedMessagesPerConsumer.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        deadLettered = Counter.builder()
                .name("settle_dead_lettered")
                .help("Messages whose last attempt failed, so the client sends them to the dead-letter topic.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        failures = Counter.builder()
                .name("settle_failures")
                .help("Failed deliveries by stage: decode, handler, output, refused_retry_after, ack_timeout (no"
                        + " outcome with an ack timeout). Never labelled by exception: the dead letter names it.")
                .labelNames("subscription", "stage")
                .withoutExemplars()
                .register(registry);
        duplicatesSuppressed = Counter.builder()
                .name("settle_duplicates_suppressed")
                .help("Copies of a message the broker dispatched twice with the same redelivery count (Shared and"
                        + " Key_Shared), kept from the handler: acknowledged again when the first copy was, else left"
                        + " to the first copy's settlement.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        batchSize = Histogram.builder()
                .name("settle_batch_size")
                .help("Deliveries in each call of a batch handler, a bisection's calls included.")
                .labelNames("subscription")
                .classicOnly()
                .classicUpperBounds(BATCH_SIZE_BUCKETS)
                .withoutExemplars()
                .register(registry);
        batchSplits = Counter.builder()
                .name("settle_batch_splits")
                .help("Calls of a batch handler that threw and were split in halves to find the messages that fail"
                        + " alone (bisection).")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        heldForFix = Counter.builder()
                .name("settle_held_for_fix")
                .help("Messages that exhausted their attempts and were stored in the held topic (onCap: hold), by the"
                        + " generation of the code that held them; settle held list shows those still waiting.")
                .labelNames("subscription", "generation")
                .withoutExemplars()
                .register(registry);
        redriven = Counter.builder()
                .name("settle_redriven")
                .help("Held messages a re-drive sent back to their topic once another generation served every key.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        durableDelaysPublished = Counter.builder()
                .name("settle_durable_delays_published")
                .help("Waits kept on the subscription's delay topic (durableDelays: true): a copy of the message stored"
                        + " there to be delivered when its wait ends, the original acknowledged with it.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        durableDelaysPending = Gauge.builder()
                .name("settle_durable_delays_pending")
                .help("Copies this runtime stored on the delay topic whose wait has not ended yet (a restart starts it"
                        + " at 0; the delay topic's backlog counts every runtime's).")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        durableDelaysRefused = Counter.builder()
                .name("settle_durable_delays_refused")
                .help("Messages on the delay topic refused as untrusted: their origin is not one of the subscription's"
                        + " topics. Acknowledged, never handled.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        batchOutcomesMissing = Counter.builder()
                .name("settle_batch_outcomes_missing")
                .help("Deliveries a batch handler's result gave no outcome: left unacknowledged, as a handler's null.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        callsIgnoringInterrupt = Gauge.builder()
                .name("settle_calls_ignoring_interrupt")
                .help(
                        "Handler threads still in a call that was given up at its deadline (handlerTimeout or its last"
                                + " extend) and interrupted over a second ago; at the subscription's concurrency, /livez fails.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        transactions = Counter.builder()
                .name("settle_transactions")
                .help(
                        "Transactions of exactly-once deliveries, by how they ended: committed, aborted (a failure,"
                                + " a retry, no outcome), timed_out (past the transaction timeout: aborted by the coordinator, given up by Settle).")
                .labelNames("subscription", "outcome")
                .withoutExemplars()
                .register(registry);
        httpRefused = Counter.builder()
                .name("settle_http_refused")
                .help("Requests refused on the runtime's ports (port: http, admin) by reason: unauthenticated,"
                        + " wrong_token, throttled, malformed, too_slow, busy.")
                .labelNames("port", "reason")
                .withoutExemplars()
                .register(registry);
        commitDuration = secondsHistogram(
                "settle_transaction_commit_duration_seconds",
                "How long the commit of an exactly-once delivery's transaction took, from the request to the"
                        + " coordinator's answer.",
                HANDLER_SECONDS_BUCKETS);
        deliveryAttempt = Histogram.builder()
                .name("settle_delivery_attempt")
                .help("The attempt number of each delivery (redelivery count + 1).")
                .labelNames("subscription")
                .classicOnly()
                .classicUpperBounds(ATTEMPT_BUCKETS)
                .withoutExemplars()
                .register(registry);
        deliveryLag = secondsHistogram(
                "settle_delivery_lag_seconds",
                "How long after its publish time each delivery reached the handler (producer's clock).",
                LAG_SECONDS_BUCKETS);
        buildInfo = Gauge.builder()
                .name("settle_build_info")
                .help("1, labelled with the Settle version and the Pulsar client version it runs.")
                .labelNames("version", "pulsar_client")
                .withoutExemplars()
                .register(registry);
        // Read from the journal's writer at each scrape: its count is one atomic add where the record is dropped.
        CounterWithCallback.builder()
                .name("settle_journal_records_dropped")
                .help("Settlement journal records lost, by journal topic: dropped by a full queue, or not stored by a"
                        + " topic that cannot be written. Settlement never waits for the journal (docs/trace.md).")
                .labelNames("topic")
                .callback(callback ->
                        journalsDropped.forEach((topic, dropped) -> callback.call(dropped.getAsLong(), topic)))
                .register(registry);
        gaugeEachSubscription(
                "settle_consumer_connected",
                "1 while the subscription's consumer is subscribed and connected to its broker, 0 otherwise.",
                connections,
                connected -> connected.getAsBoolean() ? 1 : 0,
                "connection state");
        gaugeEachSubscription(
                "settle_config_differences",
                "Consumer settings the subscription's live consumer runs with that are not what its manifest"
                        + " says (GET /config/effective lists them); 0 when every one is.",
                settingsInForce,
                IntSupplier::getAsInt,
                "settings in force");
        gaugeEachSubscription(
                "settle_receiver_queue_messages",
                "Messages the Pulsar client has prefetched into the consumer's receiver queue.",
                receiverQueues,
                IntSupplier::getAsInt,
                "receiver queue size");
        GaugeWithCallback.builder()
                .name("settle_backlog_drain_seconds")
                .help("How long the subscription's backlog (the broker's count) takes to drain at the rate it was"
                        + " settled over the last minute; 0 with no backlog, +Inf when nothing was settled lately."
                        + " Needs pulsar.adminUrl.")
                .labelNames("subscription")
                .callback(callback ->
                        drains.forEach((subscription, drain) -> callback.call(drain.drainSeconds(), subscription)))
                .register(registry);
        GaugeWithCallback.builder()
                .name("settle_oldest_unsettled_age_seconds")
                .help("Age of the subscription's oldest unsettled message, from the broker's subscription stats"
                        + " (earliestMsgPublishTimeInBacklog); 0 with no backlog. Needs pulsar.adminUrl.")
                .labelNames("subscription")
                .callback(callback -> drains.forEach(
                        (subscription, drain) -> callback.call(drain.oldestUnsettledAgeSeconds(), subscription)))
                .register(registry);
    }

    /** A histogram of seconds per subscription, in fixed classic buckets (no native histogram to configure). */
    private Histogram secondsHistogram(String name, String help, double[] buckets) {
        return Histogram.builder()
                .name(name)
                .help(help)
                .unit(Unit.SECONDS)
                .labelNames("subscription")
                .classicOnly()
                .classicUpperBounds(buckets)
                .withoutExemplars()
                .register(registry);
    }

    /**
     * A gauge of one value per subscription, read at each scrape. A consumer being closed or replaced must not fail
     * the whole scrape: a value that cannot be read leaves its subscription out of that scrape, logged at debug.
     */
    private <T> void gaugeEachSubscription(
            String name, String help, Map<String, T> sources, ToDoubleFunction<T> value, String what) {
        GaugeWithCallback.builder()
                .name(name)
                .help(help)
                .labelNames("subscription")
                .callback(callback -> sources.forEach((subscription, source) -> {
                    try {
                        callback.call(value.applyAsDouble(source), subscription);
                    } catch (RuntimeException e) {
                        log.debug("subscription '{}': {} unavailable", subscription, what, e);
                    }
                }))
                .register(registry);
    }

    /**
     * Reports {@code settle_backlog_drain_seconds} and {@code settle_oldest_unsettled_age_seconds} for
     * {@code subscription} from what its poller records into the returned {@link DrainTime}; the same one for the
     * same subscription.
     */
    public DrainTime watchDrain(String subscription) {
        return drains.computeIfAbsent(Objects.requireNonNull(subscription, "subscription"), name -> new DrainTime());
    }

    /** Deliveries of {@code subscription} settled for good so far (acknowledged, dropped, dead-lettered). */
    public long settledForGood(String subscription) {
        SubscriptionMetrics metrics = bound.get(subscription);
        return metrics == null ? 0 : metrics.settledForGood();
    }

    /**
     * The metrics one driver reports to, bound to {@code subscription}: every call is a few atomic adds, with no
     * lookup or allocation. Creates the subscription's series, each outcome at 0. Calling it again for the same
     * subscription returns the same instance, so a restarted driver continues the same counters.
     */
    public DriverMetrics forSubscription(String subscription) {
        Objects.requireNonNull(subscription, "subscription");
        return bound.computeIfAbsent(subscription, this::bind);
    }

    /**
     * Reports {@code settle_receiver_queue_messages} for {@code subscription} by calling {@code messagesInQueue} at
     * each scrape (not on the message path). A later call for the same subscription replaces the earlier one, so a
     * restarted consumer can register its own.
     */
    public void watchReceiverQueue(String subscription, IntSupplier messagesInQueue) {
        receiverQueues.put(
                Objects.requireNonNull(subscription, "subscription"),
                Objects.requireNonNull(messagesInQueue, "messagesInQueue"));
    }

    /**
     * Reports {@code settle_config_differences} for {@code subscription} by asking {@code differences} at each scrape:
     * how many consumer settings in force are not what the manifest says.
     */
    public void watchSettingsInForce(String subscription, IntSupplier differences) {
        settingsInForce.put(
                Objects.requireNonNull(subscription, "subscription"),
                Objects.requireNonNull(differences, "differences"));
    }

    /**
     * Reports {@code settle_journal_records_dropped_total} for the journal topic {@code topic} by asking
     * {@code dropped} at each scrape; a later call for the same topic replaces the earlier one.
     */
    public void watchJournal(String topic, LongSupplier dropped) {
        journalsDropped.put(Objects.requireNonNull(topic, "topic"), Objects.requireNonNull(dropped, "dropped"));
    }

    /** Reports {@code settle_consumer_connected} for {@code subscription} by asking {@code connected} at each scrape. */
    public void watchConnection(String subscription, BooleanSupplier connected) {
        connections.put(
                Objects.requireNonNull(subscription, "subscription"), Objects.requireNonNull(connected, "connected"));
    }

    /**
     * The subscriptions whose consumer is watched ({@link #watchConnection}) and not connected now, in no order; empty
     * while every one is, or before any subscribed. Asks each consumer, as a scrape does.
     */
    public List<String> disconnected() {
        List<String> disconnected = new ArrayList<>();
        connections.forEach((subscription, connected) -> {
            try {
                if (!connected.getAsBoolean()) {
                    disconnected.add(subscription);
                }
            } catch (RuntimeException e) {
                disconnected.add(subscription); // a consumer being replaced: not connected at this instant
            }
        });
        return disconnected;
    }

    /**
     * Reports {@code settle_key_hold_oldest_age_seconds} for {@code subscription} by calling {@code oldestSeconds} at
     * each scrape; a later call replaces an earlier one.
     */
    public void watchKeyHolds(String subscription, DoubleSupplier oldestSeconds) {
        keyHoldAges.put(
                Objects.requireNonNull(subscription, "subscription"),
                Objects.requireNonNull(oldestSeconds, "oldestSeconds"));
    }

    /** Stops reporting {@code settle_key_hold_oldest_age_seconds} for {@code subscription}, as its driver stops. */
    public void unwatchKeyHolds(String subscription) {
        keyHoldAges.remove(subscription);
    }

    /** Records a Pulsar Function's {@code context.recordMetric(name, value)} under {@code settle_function_metric}. */
    public void functionMetric(String subscription, String name, double value) {
        functionMetric.labelValues(subscription, name).observe(value);
    }

    /** Adds one to {@code settle_http_refused_total} for {@code port} ({@code http}, {@code admin}) and {@code reason}. */
    public void httpRefused(String port, String reason) {
        httpRefused.labelValues(port, reason).inc();
    }

    /** Sets {@code settle_build_info}: which Settle and which Pulsar client this process runs. */
    public void buildInfo(String version, String pulsarClient) {
        buildInfo.labelValues(version, pulsarClient).set(1);
    }

    /** Stops reporting {@code settle_receiver_queue_messages} for {@code subscription}, as its consumer closes. */
    public void unwatchReceiverQueue(String subscription) {
        receiverQueues.remove(subscription);
        connections.remove(subscription);
        drains.remove(subscription);
        settingsInForce.remove(subscription);
    }

    /** The registry holding these metrics and the JVM's; served by {@link HealthEndpoint}. */
    public PrometheusRegistry registry() {
        return registry;
    }

    private SubscriptionMetrics bind(String subscription) {
        return new SubscriptionMetrics(
                new SubscriptionMetrics.Families(
                        deliveries,
                        outcomes,
                        handlerDuration,
                        heldRetries,
                        inFlight,
                        deadLettered,
                        deliveryAttempt,
                        deliveryLag,
                        unackedLimitReached,
                        heldBehindKey,
                        keyHoldTimeouts,
                        keyGaps,
                        duplicatesSuppressed,
                        failures,
                        transactions,
                        commitDuration,
                        breakerState,
                        heldForOutage,
                        batchSize,
                        batchSplits,
                        batchOutcomesMissing,
                        callsIgnoringInterrupt,
                        heldForFix,
                        redriven,
                        durableDelaysPublished,
                        durableDelaysPending,
                        durableDelaysRefused),
                subscription);
    }
}
