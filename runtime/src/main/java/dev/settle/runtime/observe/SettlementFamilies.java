package dev.settle.runtime.observe;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.Unit;

/**
 * The metric families every subscription's settlement reports to ({@link SubscriptionMetrics}), registered once per
 * registry: their names, help texts, labels and buckets. Apart from {@link SettleMetrics} so that the process-wide
 * metrics (the JVM's, the ports', the gauges read at each scrape) and the per-delivery families each read whole.
 */
final class SettlementFamilies {
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

    private SettlementFamilies() {}

    /** Registers every settlement family in {@code registry}, for {@link SubscriptionMetrics} to bind. */
    static SubscriptionMetrics.Families register(PrometheusRegistry registry) {
        // The 1.x client appends _total to counters itself: the names below are written without it.
        Counter deliveries = Counter.builder()
                .name("settle_deliveries")
                .help("Messages handed to the handler (every attempt counts).")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter outcomes = Counter.builder()
                .name("settle_outcomes")
                .help("Deliveries settled, by how: ack, retry, retry_after, drop, none, error, refused; while a canary"
                        + " ramp runs, by the generation that handled them (empty, so absent, without a ramp).")
                .labelNames("subscription", "generation", "outcome")
                .withoutExemplars()
                .register(registry);
        Histogram handlerDuration = secondsHistogram(
                registry,
                "settle_handler_duration_seconds",
                "How long one handler call ran, outcome applied.",
                HANDLER_SECONDS_BUCKETS);
        Gauge heldRetries = Gauge.builder()
                .name("settle_held_retries")
                .help("Messages held in the process for retryAfter; they count toward the broker's"
                        + " maxUnackedMessagesPerConsumer.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Gauge inFlight = Gauge.builder()
                .name("settle_in_flight")
                .help("Handler calls running now.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Gauge unackedLimitReached = Gauge.builder()
                .name("settle_unacked_limit_reached")
                .help("1 while the messages held for retryAfter, a failure backoff or behind their key have reached the"
                        + " broker's default"
                        + " maxUnackedMessagesPerConsumer (50000), past which it stops dispatching to the consumer;"
                        + " 0 again below half of it.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Gauge heldBehindKey = Gauge.builder()
                .name("settle_held_behind_key")
                .help(
                        "Messages held in the process behind an earlier message of their key that waits for its retry"
                                + " (order: key); unacknowledged, they count toward the broker's maxUnackedMessagesPerConsumer.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter keyHoldTimeouts = Counter.builder()
                .name("settle_key_hold_timeouts")
                .help("Keys let go because their retried message did not come back within its delay plus"
                        + " keyHoldTimeout: the key's later messages went before it (an inversion).")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter keyGaps = Counter.builder()
                .name("settle_key_gaps")
                .help("Messages of a key-ordered subscription that went to the dead letters: their key went on"
                        + " without them.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Gauge breakerState = Gauge.builder()
                .name("settle_breaker_state")
                .help("1 for the outage circuit breaker's current state (closed, open, half-open, or off when turned"
                        + " off), 0 for the others; open and half-open mean receiving is paused and failing messages"
                        + " are held without spending attempts.")
                .labelNames("subscription", "state")
                .withoutExemplars()
                .register(registry);
        Gauge heldForOutage = Gauge.builder()
                .name("settle_breaker_held_messages")
                .help("Messages the open outage circuit breaker holds unacknowledged, spending no attempts; they count"
                        + " toward the broker's maxUnackedMessagesPerConsumer.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter deadLettered = Counter.builder()
                .name("settle_dead_lettered")
                .help("Messages whose last attempt failed, so the client sends them to the dead-letter topic.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter failures = Counter.builder()
                .name("settle_failures")
                .help("Failed deliveries by stage: decode, handler, output, refused_retry_after, ack_timeout (no"
                        + " outcome with an ack timeout). Never labelled by exception: the dead letter names it.")
                .labelNames("subscription", "stage")
                .withoutExemplars()
                .register(registry);
        Counter duplicatesSuppressed = Counter.builder()
                .name("settle_duplicates_suppressed")
                .help("Copies of a message the broker dispatched twice with the same redelivery count (Shared and"
                        + " Key_Shared), kept from the handler: acknowledged again when the first copy was, else left"
                        + " to the first copy's settlement.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Histogram batchSize = Histogram.builder()
                .name("settle_batch_size")
                .help("Deliveries in each call of a batch handler, a bisection's calls included.")
                .labelNames("subscription")
                .classicOnly()
                .classicUpperBounds(BATCH_SIZE_BUCKETS)
                .withoutExemplars()
                .register(registry);
        Counter batchSplits = Counter.builder()
                .name("settle_batch_splits")
                .help("Calls of a batch handler that threw and were split in halves to find the messages that fail"
                        + " alone (bisection).")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter heldForFix = Counter.builder()
                .name("settle_held_for_fix")
                .help("Messages that exhausted their attempts and were stored in the held topic (onCap: hold), by the"
                        + " generation of the code that held them; settle held list shows those still waiting.")
                .labelNames("subscription", "generation")
                .withoutExemplars()
                .register(registry);
        Counter redriven = Counter.builder()
                .name("settle_redriven")
                .help("Held messages a re-drive sent back to their topic once another generation served every key.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter durableDelaysPublished = Counter.builder()
                .name("settle_durable_delays_published")
                .help("Waits kept on the subscription's delay topic (durableDelays: true): a copy of the message stored"
                        + " there to be delivered when its wait ends, the original acknowledged with it.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Gauge durableDelaysPending = Gauge.builder()
                .name("settle_durable_delays_pending")
                .help("Copies this runtime stored on the delay topic whose wait has not ended yet (a restart starts it"
                        + " at 0; the delay topic's backlog counts every runtime's).")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter durableDelaysRefused = Counter.builder()
                .name("settle_durable_delays_refused")
                .help("Messages on the delay topic refused as untrusted: their origin is not one of the subscription's"
                        + " topics. Acknowledged, never handled.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter batchOutcomesMissing = Counter.builder()
                .name("settle_batch_outcomes_missing")
                .help("Deliveries a batch handler's result gave no outcome: left unacknowledged, as a handler's null.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Gauge callsIgnoringInterrupt = Gauge.builder()
                .name("settle_calls_ignoring_interrupt")
                .help(
                        "Handler threads still in a call that was given up at its deadline (handlerTimeout or its last"
                                + " extend) and interrupted over a second ago; at the subscription's concurrency, /livez fails.")
                .labelNames("subscription")
                .withoutExemplars()
                .register(registry);
        Counter transactions = Counter.builder()
                .name("settle_transactions")
                .help(
                        "Transactions of exactly-once deliveries, by how they ended: committed, aborted (a failure,"
                                + " a retry, no outcome), timed_out (past the transaction timeout: aborted by the coordinator, given up by Settle).")
                .labelNames("subscription", "outcome")
                .withoutExemplars()
                .register(registry);
        Histogram commitDuration = secondsHistogram(
                registry,
                "settle_transaction_commit_duration_seconds",
                "How long the commit of an exactly-once delivery's transaction took, from the request to the"
                        + " coordinator's answer.",
                HANDLER_SECONDS_BUCKETS);
        Histogram deliveryAttempt = Histogram.builder()
                .name("settle_delivery_attempt")
                .help("The attempt number of each delivery (redelivery count + 1).")
                .labelNames("subscription")
                .classicOnly()
                .classicUpperBounds(ATTEMPT_BUCKETS)
                .withoutExemplars()
                .register(registry);
        Histogram deliveryLag = secondsHistogram(
                registry,
                "settle_delivery_lag_seconds",
                "How long after its publish time each delivery reached the handler (producer's clock).",
                LAG_SECONDS_BUCKETS);
        return new SubscriptionMetrics.Families(
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
                durableDelaysRefused);
    }

    /** A histogram of seconds per subscription, in fixed classic buckets (no native histogram to configure). */
    private static Histogram secondsHistogram(PrometheusRegistry registry, String name, String help, double[] buckets) {
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
}
