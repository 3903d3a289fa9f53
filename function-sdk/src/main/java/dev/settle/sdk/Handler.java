package dev.settle.sdk;

/**
 * Handles the messages of one subscription, one delivery at a time per call.
 *
 * <p>Settle finds a handler through {@code META-INF/services/dev.settle.sdk.Handler} in its JAR, creates it
 * with its public no-argument constructor, calls {@link #open(HandlerContext)} once before the first message,
 * {@link #handle(Delivery)} for every delivery, and {@link #close()} once when it stops. With a manifest
 * {@code concurrency} above 1, {@code handle} is called from several threads at once (never for two
 * messages with the same key), so a handler must then be thread-safe.
 *
 * <p>Pulsar delivers at least once: a message can come again after a crash, a lost acknowledgement or a
 * redelivery, so {@code handle} must be idempotent.
 *
 * @param <T> the message type: {@code String} (UTF-8), {@code byte[]} (raw bytes), or a class read as JSON
 * @since 0.1
 */
public interface Handler<T> {

    /**
     * Prepares the handler before its first delivery; throwing here stops the runtime from starting.
     *
     * @param context the subscription this handler serves, never {@code null}
     * @throws Exception when the handler cannot run; the runtime refuses to start and shows the cause
     * @since 0.1
     */
    default void open(HandlerContext context) throws Exception {}

    /**
     * Handles one delivery and says what becomes of the message.
     *
     * <ul>
     *   <li>{@link Outcome#ack()}: done, the message never comes back;
     *   <li>{@link Outcome#retry()}: the same message comes back at once, with {@link Delivery#attempt()} one
     *       higher;
     *   <li>{@link Outcome#retryAfter(java.time.Duration)}: it comes back after the delay, attempt one higher;
     *   <li>{@link Outcome#drop()}: the message is unwanted and never comes back (counted apart from ack);
     *   <li>{@code null}: nothing is done; the message comes back after the subscription's ack timeout, or,
     *       with none, only when the consumer disconnects;
     *   <li>throwing an exception: the same as {@code retry()}, and counted as an error.
     * </ul>
     *
     * <p>With a dead-letter topic, a message that is retried (or times out) on its last attempt, when
     * {@link Delivery#attempt()} equals {@link Delivery#maxAttempts()}, goes to the dead-letter topic instead of
     * coming back.
     *
     * @param delivery the message and where it stands, never {@code null}
     * @return what to do with the message, or {@code null} to leave it unacknowledged
     * @throws Exception to retry the message at once
     * @since 0.1
     */
    Outcome handle(Delivery<T> delivery) throws Exception;

    /**
     * Releases what {@link #open(HandlerContext)} took, once, when the runtime stops; exceptions are logged.
     *
     * @throws Exception when releasing fails; the runtime logs it and goes on stopping
     * @since 0.1
     */
    default void close() throws Exception {}
}
