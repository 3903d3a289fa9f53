package dev.settle.runtime.isolation;

import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One handler instance, created in its JAR's class loader, and everything the driver needs to call it.
 *
 * <p>Every call into the handler runs with the thread context class loader set to the handler's loader, so
 * libraries that look classes or resources up through it (JAXB, Jackson modules, {@code ServiceLoader.load(S)})
 * find the handler's, not the runtime's. {@link #open(HandlerContext)} and {@link #close()} do so themselves;
 * the driver calls {@code handle} through {@link #handle(Delivery)} or {@link #callInHandlerContext(Callable)}.
 *
 * <p>Thread-safe. {@link #open} runs at most once; {@link #close()} calls the handler's {@code close()} at most
 * once, and only when {@code open} was called (a handler never opened has nothing to release). The class loader
 * stays open until the {@link HandlerLoader} that made it is closed.
 */
public final class LoadedHandler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LoadedHandler.class);

    private final String className;
    /** A {@code Handler<Object>}, or a {@code BatchHandler<Object>} (issue 47): {@link #isBatch()} says which. */
    private final Object handler;

    private final ClassLoader classLoader;
    private final Class<?> messageType;
    private final Path jar;
    private final Optional<String> version;
    /** The context class loader of its calls: the handler's loader, let go of when the handler is closed. */
    private final SafetyNetClassLoader contextLoader;

    private final AtomicBoolean opened = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    LoadedHandler(
            String className,
            Object handler,
            ClassLoader classLoader,
            SafetyNetClassLoader contextLoader,
            Class<?> messageType,
            Path jar,
            Optional<String> version) {
        this.className = Objects.requireNonNull(className, "className");
        this.handler = Objects.requireNonNull(handler, "handler");
        if (!(handler instanceof Handler<?>) && !(handler instanceof BatchHandler<?>)) {
            throw new IllegalArgumentException(className + " is neither a Handler nor a BatchHandler");
        }
        this.classLoader = Objects.requireNonNull(classLoader, "classLoader");
        this.messageType = Objects.requireNonNull(messageType, "messageType");
        this.jar = Objects.requireNonNull(jar, "jar");
        this.version = Objects.requireNonNull(version, "version");
        this.contextLoader = Objects.requireNonNull(contextLoader, "contextLoader");
    }

    /**
     * The handler's class name, as declared in its JAR.
     *
     * @return the fully qualified class name, never {@code null}
     */
    public String className() {
        return className;
    }

    /**
     * The handler instance, for this package's tests, which look at what the handler's own classes see; the
     * runtime calls it only through {@link #handle(Delivery)}, which sets its context class loader.
     *
     * @return the handler, never {@code null}
     */
    @SuppressWarnings("unchecked")
    Handler<Object> handler() {
        return (Handler<Object>) handler;
    }

    /** The code's instance, a handler or a batch handler, for this package's tests. */
    Object instance() {
        return handler;
    }

    /**
     * Whether the code is a {@code BatchHandler}, called through {@link #handleBatch(List)}, rather than a
     * {@code Handler}, called through {@link #handle(Delivery)}.
     *
     * @return true for a batch handler
     */
    public boolean isBatch() {
        return handler instanceof BatchHandler<?>;
    }

    /**
     * The class loader of the handler's JAR (or folder of JARs).
     *
     * @return the loader, never {@code null}
     */
    public ClassLoader classLoader() {
        return classLoader;
    }

    /**
     * The {@code T} of the handler's {@code Handler<T>}: {@code String.class}, {@code byte[].class}, or another
     * class, loaded by {@link #classLoader()}, to decode as JSON.
     *
     * @return the message type, never {@code null}
     */
    public Class<?> messageType() {
        return messageType;
    }

    /**
     * The JAR or folder of JARs the handler was loaded from, absolute.
     *
     * @return the location, never {@code null}
     */
    public Path jar() {
        return jar;
    }

    /**
     * The {@code Implementation-Version} in the manifest of the JAR that declares the handler.
     *
     * @return the version, or empty when the manifest has none
     */
    public Optional<String> version() {
        return version;
    }

    /**
     * Calls the handler's {@code open} with its context class loader; at most once.
     *
     * @param context the subscription the handler serves
     * @throws HandlerLoadException when {@code open} throws: the runtime must refuse to start
     * @throws IllegalStateException when called a second time, or after {@link #close()}
     */
    public void open(HandlerContext context) throws HandlerLoadException {
        Objects.requireNonNull(context, "context");
        if (closed.get()) {
            throw new IllegalStateException("handler " + className + " from " + jar + " is closed");
        }
        if (!opened.compareAndSet(false, true)) {
            throw new IllegalStateException("handler " + className + " from " + jar + " is already open");
        }
        try (ContextClassLoader ignored = ContextClassLoader.swap(contextLoader)) {
            if (handler instanceof BatchHandler<?> batch) {
                batch.open(context);
            } else {
                ((Handler<?>) handler).open(context);
            }
        } catch (Exception | Error e) {
            rethrowIfFatal(e);
            throw HandlerLoadException.openFailed(jar, className, context.subscription(), e);
        }
    }

    /**
     * Calls the handler's {@code handle} with its context class loader: the driver's per-message path. The swap is
     * written out rather than a {@link ContextClassLoader}: the JIT did not remove that object here (JFR on the no-op
     * benchmark: one per message, as many bytes as the delivery itself), and this allocates nothing.
     *
     * @param delivery the delivery, typed by {@link #messageType()}
     * @return the handler's outcome, or {@code null} for none
     * @throws Exception whatever the handler throws
     */
    public Outcome handle(Delivery<Object> delivery) throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(contextLoader);
        try {
            return handler().handle(delivery);
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    /**
     * Calls a batch handler's {@code handle} with its context class loader: one call for a batch.
     *
     * @param batch the deliveries, typed by {@link #messageType()}
     * @return the handler's result
     * @throws Exception whatever the handler throws
     * @throws ClassCastException when the code is not a batch handler ({@link #isBatch()})
     */
    @SuppressWarnings("unchecked")
    public BatchResult handleBatch(List<Delivery<Object>> batch) throws Exception {
        BatchHandler<Object> batchHandler = (BatchHandler<Object>) handler;
        try (ContextClassLoader ignored = ContextClassLoader.swap(contextLoader)) {
            return batchHandler.handle(batch);
        }
    }

    /**
     * Runs {@code call} with the thread context class loader set to the handler's, and restores the previous one
     * afterwards, whatever happens: for this package's tests, which call the handler's own methods.
     *
     * @param call what to run, typically a call on {@link #handler()}
     * @param <V> what the call returns
     * @return what {@code call} returned
     * @throws Exception whatever {@code call} throws
     */
    <V> V callInHandlerContext(Callable<V> call) throws Exception {
        try (ContextClassLoader ignored = ContextClassLoader.swap(contextLoader)) {
            return call.call();
        }
    }

    /**
     * Calls the handler's {@code close} once, with its context class loader, if it was opened; logs a failure and
     * never throws, so stopping goes on. Leaves the class loader open: {@link HandlerLoader#close()} closes it.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true) || !opened.get()) {
            contextLoader.cut();
            return;
        }
        try (ContextClassLoader ignored = ContextClassLoader.swap(contextLoader)) {
            if (handler instanceof BatchHandler<?> batch) {
                batch.close();
            } else {
                ((Handler<?>) handler).close();
            }
        } catch (Exception | Error e) {
            rethrowIfFatal(e);
            log.warn("Handler {} from {} failed to close; stopping goes on", className, jar, e);
        } finally {
            contextLoader.cut();
        }
    }

    @Override
    public String toString() {
        return className + version.map(v -> " " + v).orElse("") + " from " + jar;
    }

    // Out of memory or stack is no handler's fault to report: let it reach the thread's handler.
    private static void rethrowIfFatal(Throwable e) {
        if (e instanceof VirtualMachineError fatal) {
            throw fatal;
        }
    }
}
