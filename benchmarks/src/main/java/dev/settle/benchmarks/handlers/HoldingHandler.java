package dev.settle.benchmarks.handlers;

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.function.LongConsumer;

/**
 * Returns {@code retryAfter(delayMillis)} on a message's first delivery and acks the second; each sample is the
 * timer's lateness, second delivery − (return + delay), in nanoseconds, handed to the {@link Sink}. Its only
 * per-message state is an array sized at {@code open}, so a heap measured while messages are held counts Settle's
 * cost of holding them, not the benchmark's.
 */
public final class HoldingHandler implements Handler<byte[]> {
    private long[] returnedAt;
    private Duration delay;
    private LongConsumer sink;

    @Override
    public void open(HandlerContext context) {
        returnedAt = new long[Integer.parseInt(context.config().get("count"))];
        delay = Duration.ofMillis(Long.parseLong(context.config().get("delayMillis")));
        sink = Sink.find();
    }

    @Override
    public Outcome handle(Delivery<byte[]> delivery) {
        long now = System.nanoTime();
        int index = Payload.index(delivery.value());
        if (delivery.attempt() > 1) {
            sink.accept(now - (returnedAt[index] + delay.toNanos()));
            return Outcome.ack();
        }
        Outcome outcome = Outcome.retryAfter(delay);
        returnedAt[index] = System.nanoTime();
        return outcome;
    }
}
