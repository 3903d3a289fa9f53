package dev.settle.benchmarks.handlers;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The dependency the breaker benchmark turns off and on: a switch the benchmark (in the same JVM as Settle) sets and
 * the {@link OutageHandler} reads. As with the {@link Sink}, a JDK type in the system properties is the one object
 * both the benchmark's class loader and the handler's can name.
 */
public final class Dependency {
    public static final String PROPERTY = "settle.benchmarks.dependency";

    private Dependency() {}

    /** @param up true while the dependency answers */
    public static void install(AtomicBoolean up) {
        System.getProperties().put(PROPERTY, up);
    }

    static AtomicBoolean find() {
        if (!(System.getProperties().get(PROPERTY) instanceof AtomicBoolean up)) {
            throw new IllegalStateException(
                    "no dependency switch installed: this handler runs under the benchmark only");
        }
        return up;
    }
}
