package dev.settle.benchmarks.handlers;

import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.HandlerContext;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A bulk write that costs {@code sleepMillis} a call however many messages it holds (a database's or a search index's
 * bulk call, issue 47), acknowledging every message: {@link CountingHandler}'s work done once a batch instead of once
 * a message. Prints the {@code first} marker as the first call starts, the {@code warm} marker as the call holding
 * message {@code warmUp + 1} starts (the measured part begins), and the {@code last} marker as the call that ends the
 * {@code count}th message ends.
 */
public final class BulkHandler implements BatchHandler<byte[]> {
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
    public BatchResult handle(List<Delivery<byte[]>> batch) throws InterruptedException {
        long before = started.getAndAdd(batch.size());
        if (before == 0) {
            Marker.now("first");
        }
        if (before <= warmUp && warmUp < before + batch.size()) {
            Marker.now("warm");
        }
        if (sleepMillis > 0) {
            // The bulk call's cost: the same for one message as for a full batch.
            Thread.sleep(sleepMillis);
        }
        long after = finished.addAndGet(batch.size());
        if (after >= count && after - batch.size() < count) {
            Marker.now("last");
        }
        return BatchResult.acknowledgeAll(batch);
    }
}
