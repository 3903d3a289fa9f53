package dev.settle.sdk;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link BatchHandler} decides about each delivery of its batch, built one delivery at a time:
 * {@code BatchResult.create().ack(first).retry(second)}. Each delivery is named by the object the handler was given;
 * one it gives no outcome is left unacknowledged, as a {@link Handler} returning {@code null} leaves it.
 *
 * <p>The result records what it is told, in order, and checks nothing: the runtime refuses a result that names a
 * delivery not in the batch or gives one two outcomes. Not thread-safe: build it on one thread.
 *
 * @since 0.4
 */
public final class BatchResult {
    private final List<Entry> entries = new ArrayList<>();

    private BatchResult() {}

    /**
     * An empty result, to give outcomes to.
     *
     * @return a new result with no outcome yet, never {@code null}
     * @since 0.4
     */
    public static BatchResult create() {
        return new BatchResult();
    }

    /**
     * A result that acknowledges every delivery of {@code batch}.
     *
     * @param batch the deliveries the handler was given, not {@code null}
     * @return a new result with {@link Outcome#ack()} for each, never {@code null}
     * @throws NullPointerException if {@code batch} or one of its deliveries is {@code null}
     * @since 0.4
     */
    public static BatchResult acknowledgeAll(List<? extends Delivery<?>> batch) {
        BatchResult result = new BatchResult();
        for (Delivery<?> delivery : batch) {
            result.outcome(delivery, Outcome.ack());
        }
        return result;
    }

    /**
     * Gives {@code delivery} the outcome {@code outcome}.
     *
     * @param delivery a delivery of the batch, not {@code null}
     * @param outcome what becomes of it, not {@code null}
     * @return this result, for the next outcome
     * @throws NullPointerException if an argument is {@code null}
     * @since 0.4
     */
    public BatchResult outcome(Delivery<?> delivery, Outcome outcome) {
        entries.add(new Entry(
                Objects.requireNonNull(delivery, "delivery"),
                Objects.requireNonNull(outcome, "outcome (leave the delivery out for none)")));
        return this;
    }

    /**
     * Gives {@code delivery} {@link Outcome#ack()}.
     *
     * @param delivery a delivery of the batch, not {@code null}
     * @return this result, for the next outcome
     * @throws NullPointerException if {@code delivery} is {@code null}
     * @since 0.4
     */
    public BatchResult ack(Delivery<?> delivery) {
        return outcome(delivery, Outcome.ack());
    }

    /**
     * Gives {@code delivery} {@link Outcome#retry()}.
     *
     * @param delivery a delivery of the batch, not {@code null}
     * @return this result, for the next outcome
     * @throws NullPointerException if {@code delivery} is {@code null}
     * @since 0.4
     */
    public BatchResult retry(Delivery<?> delivery) {
        return outcome(delivery, Outcome.retry());
    }

    /**
     * Gives {@code delivery} {@link Outcome#retryAfter(Duration)}.
     *
     * @param delivery a delivery of the batch, not {@code null}
     * @param delay how long to wait before it comes back; positive, not {@code null}
     * @return this result, for the next outcome
     * @throws NullPointerException if an argument is {@code null}
     * @throws IllegalArgumentException if {@code delay} is zero or negative
     * @since 0.4
     */
    public BatchResult retryAfter(Delivery<?> delivery, Duration delay) {
        return outcome(delivery, Outcome.retryAfter(delay));
    }

    /**
     * Gives {@code delivery} {@link Outcome#drop()}.
     *
     * @param delivery a delivery of the batch, not {@code null}
     * @return this result, for the next outcome
     * @throws NullPointerException if {@code delivery} is {@code null}
     * @since 0.4
     */
    public BatchResult drop(Delivery<?> delivery) {
        return outcome(delivery, Outcome.drop());
    }

    /**
     * Every outcome given, in the order given, repeats included.
     *
     * @return an unmodifiable view, never {@code null}
     * @since 0.4
     */
    public List<Entry> entries() {
        return Collections.unmodifiableList(entries);
    }

    /**
     * One outcome given to one delivery.
     *
     * @param delivery the delivery named, never {@code null}
     * @param outcome its outcome, never {@code null}
     * @since 0.4
     */
    public record Entry(Delivery<?> delivery, Outcome outcome) {}
}
