package dev.settle.runtime.isolation;

/**
 * The statement that makes a handler the tests compile ({@link TestJar}) take time on purpose, in one place: a kill, a
 * SIGTERM, a swap, a lease or a readiness check must find the handler still at work. It is the work a test waits
 * for, never a test waiting for a condition (issue 43).
 */
public final class HandlerWork {
    private HandlerWork() {}

    /** A statement that keeps the handler busy for {@code millis}, a Java expression of type long. */
    public static String pause(String millis) {
        // Deliberate: the handler's own work, which the test needs in flight; it heeds an interrupt (a lease's end).
        return "Thread.sleep(" + millis + ");";
    }

    /** A statement that keeps the handler busy for {@code millis}. */
    public static String pause(long millis) {
        return pause(Long.toString(millis));
    }

    /** A statement for {@code open(HandlerContext context)}: as long as the config's {@code openMillis} (default 0). */
    public static String openPause() {
        return pause("Long.parseLong(context.config().getOrDefault(\"openMillis\", \"0\"))");
    }
}
