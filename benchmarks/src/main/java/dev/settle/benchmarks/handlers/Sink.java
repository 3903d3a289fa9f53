package dev.settle.benchmarks.handlers;

import java.util.function.LongConsumer;

/**
 * Where a handler hands its samples when Settle runs in the same JVM as the benchmark. The handler lives in its
 * own class loader, so it cannot see the benchmark's classes; a JDK type put in the system properties (shared by
 * every loader) is the one channel both sides can name.
 */
public final class Sink {
    public static final String PROPERTY = "settle.benchmarks.sink";

    private Sink() {}

    public static void install(LongConsumer sink) {
        System.getProperties().put(PROPERTY, sink);
    }

    static LongConsumer find() {
        Object sink = System.getProperties().get(PROPERTY);
        if (!(sink instanceof LongConsumer consumer)) {
            throw new IllegalStateException("no sample sink installed: this handler runs under the benchmark only");
        }
        return consumer;
    }
}
