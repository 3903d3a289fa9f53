package dev.settle.runtime.driver;

/**
 * What a driver reports as it works, for one subscription. Implementations must be cheap and thread-safe: they
 * are called on the message path.
 */
public interface DriverMetrics {
    /**
     * A message was handed to the handler; {@code attempt} is its redelivery count + 1, {@code lagMillis} how long
     * ago it was published (by the producer's clock; never below 0).
     */
    void delivered(int attempt, long lagMillis);

    /** A delivery was settled after the handler ran for {@code handlerNanos}. */
    void settled(Settled how, long handlerNanos);

    /**
     * As {@link #settled(Settled, long)}, by generation {@code generation} of the code while a canary ramp runs (0:
     * no ramp, the subscription's one code).
     */
    default void settled(Settled how, long handlerNanos, int generation) {
        settled(how, handlerNanos);
    }

    /** A failed last attempt: the message goes to the dead-letter topic (Settle's copy, or the client's). */
    void deadLettered();

    /**
     * A delivery failed at {@code stage} (a retry the handler asked for is counted as its outcome, not here). Does
     * nothing by default.
     */
    default void failed(Failure.Stage stage) {}

    /** Messages held for {@code retryAfter} changed by {@code delta}. */
    void heldChanged(int delta);

    /** Handler calls in flight changed by {@code delta}. */
    void inFlightChanged(int delta);

    /**
     * The duplicate guard kept a second copy of a message (same id, same redelivery count) from the handler. Does
     * nothing by default.
     */
    default void duplicateSuppressed() {}

    /**
     * The held messages reached the broker's per-consumer unacked limit ({@code true}), or fell below half of it
     * again ({@code false}); see {@code UnackedLimit}. Does nothing by default.
     */
    default void unackedLimitReached(boolean reached) {}

    /**
     * An exactly-once delivery's transaction committed, the commit having taken {@code commitNanos}. Does nothing by
     * default.
     */
    default void transactionCommitted(long commitNanos) {}

    /**
     * An exactly-once delivery's transaction was aborted: {@code timedOut} when it had outlived its timeout (the
     * coordinator aborted it). Does nothing by default.
     */
    default void transactionAborted(boolean timedOut) {}

    /**
     * Messages held in the runtime behind an earlier message of their key that waits for its retry changed by
     * {@code delta}. Does nothing by default.
     */
    default void heldBehindKeyChanged(int delta) {}

    /**
     * A key's retry did not come back within its delay plus {@code keyHoldTimeout}: the key's later messages were let
     * go before it (an inversion of the key's order). Does nothing by default.
     */
    default void keyHoldTimedOut() {}

    /**
     * A message of a key whose retries keep key order went to the dead letters: the key goes on without it (a gap).
     * Does nothing by default.
     */
    default void keyGap() {}

    /**
     * The outage circuit breaker is now in {@code state} ({@code closed}, {@code open} or {@code half-open}). Does
     * nothing by default.
     */
    default void breakerChanged(String state) {}

    /** Messages held by the open breaker changed by {@code delta}. Does nothing by default. */
    default void heldForOutageChanged(int delta) {}

    /** A batch handler was called with {@code size} deliveries (a bisection's calls included). Does nothing by default. */
    default void batchCalled(int size) {}

    /**
     * A batch handler's call of {@code size} deliveries threw, and the batch is split in halves to find the ones that
     * fail alone. Does nothing by default.
     */
    default void batchSplit(int size) {}

    /** A batch handler's result gave one delivery no outcome. Does nothing by default. */
    default void batchOutcomeMissing() {}

    /** Threads still in a handler call given up at its deadline, ignoring their interrupt, are now {@code count}. */
    default void callsIgnoringInterrupt(int count) {}

    /**
     * A message that exhausted its attempts was stored in the held topic ({@code onCap: hold}), held by {@code
     * generation} of the code. Does nothing by default.
     */
    default void heldForFix(int generation) {}

    /** A re-drive sent {@code count} held messages back to their topic. Does nothing by default. */
    default void redriven(int count) {}

    /** A wait was kept on the delay topic: its copy is stored ({@code durableDelays}). Does nothing by default. */
    default void durableDelayPublished() {}

    /** Copies this runtime stored on the delay topic whose wait has not ended changed by {@code delta}. */
    default void durableDelaysPendingChanged(int delta) {}

    /** A message on the delay topic was refused: its origin is not one of the subscription's topics. */
    default void durableDelayRefused() {}
}
