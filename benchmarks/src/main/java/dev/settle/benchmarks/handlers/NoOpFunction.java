package dev.settle.benchmarks.handlers;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Function;

/**
 * A no-op Pulsar Function without an output: returns null, so its runner acknowledges the input and publishes nothing.
 * LocalRunner runs it on the unbatched no-op drain, beside Settle's {@code CountingHandler} and the loop. Prints the
 * {@code first} marker as the first call starts, the {@code warm} marker as call {@code warmUp + 1} starts (user config
 * {@code warmUp}, 0 when absent) and the {@code last} marker as the {@code count}th call returns, as
 * {@link IdentityFunction}.
 */
public final class NoOpFunction implements Function<byte[], Void> {
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong finished = new AtomicLong();
    private volatile long count = -1;
    private volatile long warmUp;

    @Override
    public Void process(byte[] input, Context context) {
        if (count < 0) {
            warmUp =
                    Long.parseLong((String) context.getUserConfigValue("warmUp").orElse("0"));
            count = Long.parseLong((String) context.getUserConfigValue("count").orElse("-1"));
        }
        long call = started.getAndIncrement();
        if (call == 0) {
            Marker.now("first");
        }
        if (call == warmUp) {
            Marker.now("warm");
        }
        if (finished.incrementAndGet() == count) {
            Marker.now("last");
        }
        return null;
    }
}
