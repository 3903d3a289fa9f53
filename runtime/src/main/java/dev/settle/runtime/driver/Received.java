package dev.settle.runtime.driver;

/**
 * A message as settling it needs to know it, read once when it is received: the consumer calls take
 * {@code message}; the rest is what the rules look at.
 *
 * @param message what the consumer calls are made with
 * @param id names the message in logs
 * @param attempt the redelivery count + 1, as the broker counted it
 * @param batched whether it came in a batch of more than one, so a retry brings back its siblings too
 * @param receivedNanos when it was handed out, on the runtime's {@link dev.settle.runtime.time.Time}: the
 *     client's ack-timeout clock runs from there
 */
record Received<M>(M message, Object id, int attempt, boolean batched, long receivedNanos) {}
