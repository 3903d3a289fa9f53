package dev.settle.runtime.observe;

import dev.settle.runtime.driver.DriverMetrics;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
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

    private final PrometheusRegistry registry = new PrometheusRegistry();
    /** The settlement families each subscription binds its series of. */
    private final SubscriptionMetrics.Families families;

    private final Map<String, DoubleSupplier> keyHoldAges = new ConcurrentHashMap<>();
    private final Counter httpRefused;
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
        families = SettlementFamilies.register(registry);
        // A summary, as Pulsar Functions report recordMetric: count and sum per name, no quantiles to configure.
        functionMetric = Summary.builder()
                .name("settle_function_metric")
                .help("Values a Pulsar Function recorded with context.recordMetric(name, value).")
                .labelNames("subscription", "name")
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
        httpRefused = Counter.builder()
                .name("settle_http_refused")
                .help("Requests refused on the runtime's ports (port: http, admin) by reason: unauthenticated,"
                        + " wrong_token, throttled, malformed, too_slow, busy.")
                .labelNames("port", "reason")
                .withoutExemplars()
                .register(registry);
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
        return new SubscriptionMetrics(families, subscription);
    }
}
