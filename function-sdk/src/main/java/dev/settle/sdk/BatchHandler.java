package dev.settle.sdk;

import java.util.List;

/**
 * Handles the messages of one subscription many at a time: one call for a batch of deliveries, an outcome for each.
 *
 * <p>Settle finds a batch handler through {@code META-INF/services/dev.settle.sdk.BatchHandler} in its JAR, creates
 * it with its public no-argument constructor, calls {@link #open(HandlerContext)} once before the first batch,
 * {@link #handle(List)} for every batch, and {@link #close()} once when it stops. It gathers a batch up to the
 * subscription's {@code batch:} limits ({@code maxMessages}, {@code maxBytes}, {@code maxWait}); messages with the
 * same key are in a batch in the order they were published, and a later batch holds none of a key while an earlier
 * message of it is unsettled. With a manifest {@code concurrency} above 1, that many batches are handled at once, so a
 * handler must then be thread-safe.
 *
 * <p>Each delivery is settled on its own, as if a {@link Handler} had returned its outcome: it keeps its own attempt
 * count, cap and dead letter. A call that throws says nothing about which message failed: Settle then splits the
 * batch in halves and calls again with each, down to a single message, spending no attempt on the way; only a single
 * message whose call throws is counted a failed attempt. So {@code handle} may see a message more than once in one
 * attempt, and must be idempotent, as a handler of one message must (Pulsar delivers at least once).
 *
 * @param <T> the message type: {@code String} (UTF-8), {@code byte[]} (raw bytes), or a class read as JSON
 * @since 0.4
 */
public interface BatchHandler<T> {

    /**
     * Prepares the handler before its first batch; throwing here stops the runtime from starting.
     *
     * @param context the subscription this handler serves, never {@code null}
     * @throws Exception when the handler cannot run; the runtime refuses to start and shows the cause
     * @since 0.4
     */
    default void open(HandlerContext context) throws Exception {}

    /**
     * Handles a batch and says what becomes of each message, as {@link Handler#handle(Delivery)} does for one.
     *
     * <p>A delivery missing from the result gets no outcome (the same as a {@link Handler} returning {@code null}:
     * it comes back after the ack timeout), and is logged and counted. A result that names a delivery not in this
     * batch, or gives one delivery two outcomes, fails the call for every delivery in it (each counted a failed
     * attempt), with a log line naming the handler.
     *
     * @param batch the deliveries, at least one, in the order received; unmodifiable, never {@code null}
     * @return an outcome for each delivery ({@link BatchResult#acknowledgeAll(List)} when all went well), never
     *     {@code null}
     * @throws Exception when the batch failed as a whole: Settle splits it to find the messages that fail alone
     * @since 0.4
     */
    BatchResult handle(List<Delivery<T>> batch) throws Exception;

    /**
     * Releases what {@link #open(HandlerContext)} took, once, when the runtime stops; exceptions are logged.
     *
     * @throws Exception when releasing fails; the runtime logs it and goes on stopping
     * @since 0.4
     */
    default void close() throws Exception {}
}
