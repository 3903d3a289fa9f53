package dev.settle.runtime.isolation;

import java.time.Duration;

/** Handler loaders with a short load deadline, for tests outside this package. */
public final class TestLoaders {
    private TestLoaders() {}

    public static HandlerLoader withLoadDeadline(Duration deadline) {
        return new HandlerLoader(JarLimits.DEFAULT, deadline);
    }
}
