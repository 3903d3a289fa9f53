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

    /** A second channel, named {@code channel}, for a handler that hands over two kinds of sample. */
    public static void install(String channel, LongConsumer sink) {
        System.getProperties().put(PROPERTY + "." + channel, sink);
    }

    static LongConsumer find() {
        return found(System.getProperties().get(PROPERTY));
    }

    static LongConsumer find(String channel) {
        return found(System.getProperties().get(PROPERTY + "." + channel));
    }

    private static LongConsumer found(Object sink) {
        if (!(sink instanceof LongConsumer consumer)) {
            throw new IllegalStateException("no sample sink installed: this handler runs under the benchmark only");
        }
        return consumer;
    }
}
