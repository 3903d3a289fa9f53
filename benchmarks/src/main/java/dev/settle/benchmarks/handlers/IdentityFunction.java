package dev.settle.benchmarks.handlers;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Function;

/**
 * An identity Pulsar Function, run by Settle with an {@code output:} at its defaults: returns its input. Prints the
 * {@code first} marker as the first call starts, the {@code warm} marker as call {@code warmUp + 1} starts (the
 * measured part begins; user config {@code warmUp}, 0 when absent) and the {@code last} marker as the {@code count}th
 * call returns (its output then at most the producer's batching delay and a broker write from stored).
 */
public final class IdentityFunction implements Function<byte[], byte[]> {
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong finished = new AtomicLong();
    private volatile long count = -1;
    private volatile long warmUp;

    @Override
    public byte[] process(byte[] input, Context context) {
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
        return input;
    }
}
