package dev.settle.runtime.isolation;

import java.util.Objects;

/**
 * The current thread's context class loader, set for the length of a try-with-resources block and put back when it
 * ends, whatever happens inside.
 *
 * <pre>{@code
 * try (ContextClassLoader ignored = ContextClassLoader.swap(handlerLoader)) {
 *     return handler.handle(delivery);
 * }
 * }</pre>
 *
 * <p>One type for the swap so that "restore in a finally" cannot be forgotten or restored on the wrong thread (the
 * same idea as Kafka Connect's {@code LoaderSwap} and Flink's {@code TemporaryClassLoaderContext}). Public because
 * the driver builds a handler's schema in the handler's loader. Not thread-safe: open and close it on one thread,
 * which try-with-resources does.
 */
public final class ContextClassLoader implements AutoCloseable {

    private final Thread thread;
    private final ClassLoader previous;

    private ContextClassLoader(Thread thread, ClassLoader previous) {
        this.thread = thread;
        this.previous = previous;
    }

    /**
     * Sets the current thread's context class loader to {@code loader} until {@link #close()}.
     *
     * @param loader the loader to set, not {@code null}
     * @return the swap, to close on this thread
     */
    public static ContextClassLoader swap(ClassLoader loader) {
        Objects.requireNonNull(loader, "loader");
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        return new ContextClassLoader(thread, previous);
    }

    /** Puts back the loader the thread had before {@link #swap(ClassLoader)}; may be {@code null}, as it was. */
    @Override
    public void close() {
        // The thread captured at swap time, not the current one: a close on another thread must not leave the
        // swapping thread with the handler's loader and give the closing thread someone else's.
        thread.setContextClassLoader(previous);
    }

    /**
     * Whether a thread's context class loader {@code context} is {@code loader}, or the safety net a handler's calls
     * ran with over it (a thread the handler started inherits that net): for naming the threads a handler left
     * behind.
     */
    public static boolean isOrWraps(ClassLoader context, ClassLoader loader) {
        return context == loader || (context instanceof SafetyNetClassLoader net && net.wraps(loader));
    }
}
