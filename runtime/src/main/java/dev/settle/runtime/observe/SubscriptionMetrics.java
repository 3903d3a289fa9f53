package dev.settle.runtime.observe;

import dev.settle.runtime.driver.DriverMetrics;
import dev.settle.runtime.driver.Failure;
import dev.settle.runtime.driver.Settled;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.datapoints.GaugeDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * {@link DriverMetrics} for one subscription, with every series resolved up front: the message path only adds to
 * data points it already holds (the outcome's is found by {@link Settled#ordinal()} in an array).
 */
final class SubscriptionMetrics implements DriverMetrics {
    private static final double NANOS_PER_SECOND = 1_000_000_000.0;
    private static final Settled[] OUTCOMES = Settled.values();
    private static final Failure.Stage[] STAGES = Failure.Stage.values();

    private final CounterDataPoint deliveries;
    private final CounterDataPoint[] outcomes = new CounterDataPoint[OUTCOMES.length];
    /** {@code settle_outcomes}, whose series of a ramp's generations are found as each is settled. */
    private final Counter outcomesByGeneration;
    /** Acknowledged and dropped deliveries counted under a ramp's generation, for {@link #settledForGood()}. */
    private final LongAdder settledForGoodByGeneration = new LongAdder();

    private final DistributionDataPoint handlerSeconds;
    private final GaugeDataPoint held;
    private final GaugeDataPoint inFlight;
    private final GaugeDataPoint unackedLimitReached;
    private final GaugeDataPoint heldBehindKey;
    private final CounterDataPoint keyHoldTimeouts;
    private final CounterDataPoint keyGaps;
    private final CounterDataPoint duplicatesSuppressed;
    private final CounterDataPoint deadLettered;
    private final DistributionDataPoint attempt;
    private final DistributionDataPoint lagSeconds;
    private final CounterDataPoint[] failures = new CounterDataPoint[STAGES.length];
    private final CounterDataPoint transactionsCommitted;
    private final CounterDataPoint transactionsAborted;
    private final CounterDataPoint transactionsTimedOut;
    private final DistributionDataPoint commitSeconds;
    /** {@code settle_breaker_state}, one series a state, in {@link #BREAKER_STATES}' order: 1 for the current one. */
    private final GaugeDataPoint[] breakerStates = new GaugeDataPoint[BREAKER_STATES.size()];

    private final GaugeDataPoint heldForOutage;
    /** The outage circuit breaker's states as its driver reports them ({@code off} when it is turned off). */
    static final List<String> BREAKER_STATES = List.of("closed", "open", "half-open", "off");

    private final DistributionDataPoint batchSize;
    private final CounterDataPoint batchSplits;
    private final CounterDataPoint batchOutcomesMissing;
    private final GaugeDataPoint callsIgnoringInterrupt;
    /** {@code settle_held_for_fix}, labelled by generation as each is told. */
    private final Counter heldForFix;

    private final String subscription;
    private final CounterDataPoint redriven;
    private final CounterDataPoint durableDelaysPublished;
    private final GaugeDataPoint durableDelaysPending;
    private final CounterDataPoint durableDelaysRefused;

    /**
     * The metric families every subscription's series are labelled from, made once for the process by
     * {@link SettleMetrics}.
     */
    record Families(
            Counter deliveries,
            Counter outcomes,
            Histogram handlerDuration,
            Gauge heldRetries,
            Gauge inFlight,
            Counter deadLettered,
            Histogram deliveryAttempt,
            Histogram deliveryLag,
            Gauge unackedLimitReached,
            Gauge heldBehindKey,
            Counter keyHoldTimeouts,
            Counter keyGaps,
            Counter duplicatesSuppressed,
            Counter failures,
            Counter transactions,
            Histogram commitDuration,
            Gauge breakerState,
            Gauge heldForOutage,
            Histogram batchSize,
            Counter batchSplits,
            Counter batchOutcomesMissing,
            Gauge callsIgnoringInterrupt,
            Counter heldForFix,
            Counter redriven,
            Counter durableDelaysPublished,
            Gauge durableDelaysPending,
            Counter durableDelaysRefused) {}

    /** {@code subscription}'s series of {@code families}, each resolved now. */
    SubscriptionMetrics(Families families, String subscription) {
        this.deliveries = families.deliveries().labelValues(subscription);
        // Resolving every outcome now is also what makes each one appear at 0 before it first happens.
        for (Settled how : OUTCOMES) {
            // Without a ramp the generation is empty, which Prometheus reads as no label: no series per deploy.
            outcomes[how.ordinal()] = families.outcomes().labelValues(subscription, "", how.label());
        }
        this.outcomesByGeneration = families.outcomes();
        this.handlerSeconds = families.handlerDuration().labelValues(subscription);
        this.held = families.heldRetries().labelValues(subscription);
        this.inFlight = families.inFlight().labelValues(subscription);
        this.deadLettered = families.deadLettered().labelValues(subscription);
        this.attempt = families.deliveryAttempt().labelValues(subscription);
        this.lagSeconds = families.deliveryLag().labelValues(subscription);
        this.unackedLimitReached = families.unackedLimitReached().labelValues(subscription);
        this.heldBehindKey = families.heldBehindKey().labelValues(subscription);
        this.keyHoldTimeouts = families.keyHoldTimeouts().labelValues(subscription);
        this.keyGaps = families.keyGaps().labelValues(subscription);
        this.duplicatesSuppressed = families.duplicatesSuppressed().labelValues(subscription);
        this.transactionsCommitted = families.transactions().labelValues(subscription, "committed");
        this.transactionsAborted = families.transactions().labelValues(subscription, "aborted");
        this.transactionsTimedOut = families.transactions().labelValues(subscription, "timed_out");
        this.commitSeconds = families.commitDuration().labelValues(subscription);
        for (int i = 0; i < breakerStates.length; i++) {
            breakerStates[i] = families.breakerState().labelValues(subscription, BREAKER_STATES.get(i));
        }
        this.heldForOutage = families.heldForOutage().labelValues(subscription);
        this.batchSize = families.batchSize().labelValues(subscription);
        this.batchSplits = families.batchSplits().labelValues(subscription);
        this.batchOutcomesMissing = families.batchOutcomesMissing().labelValues(subscription);
        this.callsIgnoringInterrupt = families.callsIgnoringInterrupt().labelValues(subscription);
        this.subscription = subscription;
        this.heldForFix = families.heldForFix();
        this.redriven = families.redriven().labelValues(subscription);
        this.durableDelaysPublished = families.durableDelaysPublished().labelValues(subscription);
        this.durableDelaysPending = families.durableDelaysPending().labelValues(subscription);
        this.durableDelaysRefused = families.durableDelaysRefused().labelValues(subscription);
        for (Failure.Stage stage : STAGES) {
            // A retry is the handler's own outcome, counted there: no failure series of its own.
            if (stage != Failure.Stage.RETRY) {
                failures[stage.ordinal()] = families.failures().labelValues(subscription, stage.label());
            }
        }
    }

    /**
     * Deliveries settled for good so far (acknowledged or dropped, and dead-lettered): what leaves the backlog, the
     * rate {@link DrainTime} divides it by.
     */
    long settledForGood() {
        return (long) (outcomes[Settled.ACK.ordinal()].get()
                        + outcomes[Settled.DROP.ordinal()].get()
                        + deadLettered.get())
                + settledForGoodByGeneration.sum();
    }

    @Override
    public void failed(Failure.Stage stage) {
        CounterDataPoint counter = failures[stage.ordinal()];
        if (counter != null) {
            counter.inc();
        }
    }

    @Override
    public void delivered(int attempt, long lagMillis) {
        deliveries.inc();
        this.attempt.observe(attempt);
        lagSeconds.observe(lagMillis / 1000.0);
    }

    @Override
    public void settled(Settled how, long handlerNanos) {
        outcomes[how.ordinal()].inc();
        handlerSeconds.observe(handlerNanos / NANOS_PER_SECOND);
    }

    @Override
    public void settled(Settled how, long handlerNanos, int generation) {
        if (generation == 0) {
            settled(how, handlerNanos);
            return;
        }
        // Only while a ramp runs: a look-up per delivery, for a few generations.
        outcomesByGeneration
                .labelValues(subscription, Integer.toString(generation), how.label())
                .inc();
        if (how == Settled.ACK || how == Settled.DROP) {
            settledForGoodByGeneration.increment();
        }
        handlerSeconds.observe(handlerNanos / NANOS_PER_SECOND);
    }

    @Override
    public void deadLettered() {
        deadLettered.inc();
    }

    @Override
    public void heldChanged(int delta) {
        held.inc(delta);
    }

    @Override
    public void heldBehindKeyChanged(int delta) {
        heldBehindKey.inc(delta);
    }

    @Override
    public void keyHoldTimedOut() {
        keyHoldTimeouts.inc();
    }

    @Override
    public void keyGap() {
        keyGaps.inc();
    }

    @Override
    public void breakerChanged(String state) {
        for (int i = 0; i < breakerStates.length; i++) {
            breakerStates[i].set(BREAKER_STATES.get(i).equals(state) ? 1 : 0);
        }
    }

    @Override
    public void heldForOutageChanged(int delta) {
        heldForOutage.inc(delta);
    }

    @Override
    public void inFlightChanged(int delta) {
        inFlight.inc(delta);
    }

    @Override
    public void duplicateSuppressed() {
        duplicatesSuppressed.inc();
    }

    @Override
    public void unackedLimitReached(boolean reached) {
        unackedLimitReached.set(reached ? 1 : 0);
    }

    @Override
    public void transactionCommitted(long commitNanos) {
        transactionsCommitted.inc();
        commitSeconds.observe(commitNanos / NANOS_PER_SECOND);
    }

    @Override
    public void transactionAborted(boolean timedOut) {
        (timedOut ? transactionsTimedOut : transactionsAborted).inc();
    }

    @Override
    public void batchCalled(int size) {
        batchSize.observe(size);
    }

    @Override
    public void batchSplit(int size) {
        batchSplits.inc();
    }

    @Override
    public void batchOutcomeMissing() {
        batchOutcomesMissing.inc();
    }

    @Override
    public void callsIgnoringInterrupt(int count) {
        callsIgnoringInterrupt.set(count);
    }

    @Override
    public void heldForFix(int generation) {
        // Off the hot path: one held message per exhausted cap, so the label is looked up each time.
        heldForFix.labelValues(subscription, Integer.toString(generation)).inc();
    }

    @Override
    public void redriven(int count) {
        redriven.inc(count);
    }

    @Override
    public void durableDelayPublished() {
        durableDelaysPublished.inc();
    }

    @Override
    public void durableDelaysPendingChanged(int delta) {
        durableDelaysPending.inc(delta);
    }

    @Override
    public void durableDelayRefused() {
        durableDelaysRefused.inc();
    }
}
