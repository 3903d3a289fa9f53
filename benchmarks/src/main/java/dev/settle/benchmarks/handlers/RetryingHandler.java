package dev.settle.benchmarks.handlers;

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongConsumer;

/**
 * Returns {@code retry()} for the first {@code retries} deliveries of each message, then acks it. Each sample is
 * the time from one {@code retry()} returning to the same message's next delivery, in nanoseconds, handed to the
 * {@link Sink}.
 */
public final class RetryingHandler implements Handler<byte[]> {
    private final Map<String, Long> returnedAt = new ConcurrentHashMap<>();
    private LongConsumer sink;
    private int retries;

    @Override
    public void open(HandlerContext context) {
        retries = Integer.parseInt(context.config().get("retries"));
        sink = Sink.find();
    }

    @Override
    public Outcome handle(Delivery<byte[]> delivery) {
        long now = System.nanoTime();
        Long returned = returnedAt.remove(delivery.messageId());
        if (returned != null) {
            sink.accept(now - returned);
        }
        if (delivery.attempt() > retries) {
            return Outcome.ack();
        }
        returnedAt.put(delivery.messageId(), System.nanoTime());
        return Outcome.retry();
    }
}
