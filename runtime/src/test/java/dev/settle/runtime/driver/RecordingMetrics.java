package dev.settle.runtime.driver;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** A {@link DriverMetrics} that counts, for assertions. */
class RecordingMetrics implements DriverMetrics {
    private final Map<Settled, AtomicInteger> settled = new EnumMap<>(Settled.class);
    final AtomicInteger delivered = new AtomicInteger();
    final AtomicInteger deadLettered = new AtomicInteger();
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    final AtomicInteger duplicatesSuppressed = new AtomicInteger();
    final AtomicInteger heldBehindKey = new AtomicInteger();
    final AtomicInteger keyHoldsTimedOut = new AtomicInteger();
    final AtomicInteger keyGaps = new AtomicInteger();
    /** Failures by stage, as {@link #failed} was told. */
    final Map<Failure.Stage, Integer> failures = new java.util.concurrent.ConcurrentHashMap<>();

    final AtomicInteger transactionsCommitted = new AtomicInteger();
    /** Each batch call's size, in order; the batches split; the deliveries a batch result left out. */
    final java.util.List<Integer> batchSizes = new java.util.concurrent.CopyOnWriteArrayList<>();

    final AtomicInteger batchSplits = new AtomicInteger();
    final AtomicInteger batchOutcomesMissing = new AtomicInteger();
    final AtomicInteger transactionsAborted = new AtomicInteger();
    final AtomicInteger transactionsTimedOut = new AtomicInteger();
    /** What {@link #unackedLimitReached} was told, in order. */
    final java.util.List<Boolean> unackedLimit = new java.util.concurrent.CopyOnWriteArrayList<>();

    final AtomicInteger durableDelaysPublished = new AtomicInteger();
    final AtomicInteger durableDelaysPending = new AtomicInteger();
    final AtomicInteger durableDelaysRefused = new AtomicInteger();

    @Override
    public void durableDelayPublished() {
        durableDelaysPublished.incrementAndGet();
    }

    @Override
    public void durableDelaysPendingChanged(int delta) {
        durableDelaysPending.addAndGet(delta);
    }

    @Override
    public void durableDelayRefused() {
        durableDelaysRefused.incrementAndGet();
    }

    RecordingMetrics() {
        for (Settled how : Settled.values()) {
            settled.put(how, new AtomicInteger());
        }
    }

    int count(Settled how) {
        return settled.get(how).get();
    }

    @Override
    public void delivered(int attempt, long lagMillis) {
        delivered.incrementAndGet();
    }

    @Override
    public void settled(Settled how, long handlerNanos) {
        settled.get(how).incrementAndGet();
    }

    @Override
    public void heldBehindKeyChanged(int delta) {
        heldBehindKey.addAndGet(delta);
    }

    @Override
    public void keyHoldTimedOut() {
        keyHoldsTimedOut.incrementAndGet();
    }

    @Override
    public void keyGap() {
        keyGaps.incrementAndGet();
    }

    @Override
    public void duplicateSuppressed() {
        duplicatesSuppressed.incrementAndGet();
    }

    @Override
    public void failed(Failure.Stage stage) {
        failures.merge(stage, 1, Integer::sum);
    }

    @Override
    public void deadLettered() {
        deadLettered.incrementAndGet();
    }

    @Override
    public void heldChanged(int delta) {
        held.addAndGet(delta);
    }

    @Override
    public void inFlightChanged(int delta) {
        maxInFlight.accumulateAndGet(inFlight.addAndGet(delta), Math::max);
    }

    @Override
    public void unackedLimitReached(boolean reached) {
        unackedLimit.add(reached);
    }

    @Override
    public void transactionCommitted(long commitNanos) {
        transactionsCommitted.incrementAndGet();
    }

    @Override
    public void transactionAborted(boolean timedOut) {
        (timedOut ? transactionsTimedOut : transactionsAborted).incrementAndGet();
    }

    @Override
    public void batchCalled(int size) {
        batchSizes.add(size);
    }

    @Override
    public void batchSplit(int size) {
        batchSplits.incrementAndGet();
    }

    @Override
    public void batchOutcomeMissing() {
        batchOutcomesMissing.incrementAndGet();
    }
}
