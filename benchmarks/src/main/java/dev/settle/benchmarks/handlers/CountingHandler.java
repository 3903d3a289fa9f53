package dev.settle.benchmarks.handlers;

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Acks every message, after sleeping {@code sleepMillis} (0: a no-op handler; 5: an I/O-bound one). Prints the
 * {@code first} marker as the first call starts, the {@code warm} marker as call {@code warmUp + 1} starts (the
 * measured part begins), and the {@code last} marker as the {@code count}th call ends.
 */
public final class CountingHandler implements Handler<byte[]> {
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong finished = new AtomicLong();
    private long count;
    private long warmUp;
    private long sleepMillis;

    @Override
    public void open(HandlerContext context) {
        count = Long.parseLong(context.config().get("count"));
        warmUp = Long.parseLong(context.config().getOrDefault("warmUp", "0"));
        sleepMillis = Long.parseLong(context.config().getOrDefault("sleepMillis", "0"));
    }

    @Override
    public Outcome handle(Delivery<byte[]> delivery) throws InterruptedException {
        long call = started.getAndIncrement();
        if (call == 0) {
            Marker.now("first");
        }
        if (call == warmUp) {
            Marker.now("warm");
        }
        if (sleepMillis > 0) {
            Thread.sleep(sleepMillis);
        }
        if (finished.incrementAndGet() == count) {
            Marker.now("last");
        }
        return Outcome.ack();
    }
}
