package dev.settle.runtime.isolation;

import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.Handler;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads handlers from their JARs, each JAR (or folder of JARs) in a class loader of its own.
 *
 * <p>A JAR declares its handlers in {@code META-INF/services/dev.settle.sdk.Handler}; only handlers declared by
 * the JARs at the given location are considered, never one elsewhere on the class path. A handler is created with
 * its public no-argument constructor, as {@link java.util.ServiceLoader} would, but each mistake gets a message
 * that names the JAR, lists what it declares and says what to do ({@link HandlerLoadException}).
 *
 * <p>Every load has a class loader of its own, even of a location loaded before: one per subscription and per
 * generation of its code, so no two share classes or static state, and {@link #release} closes exactly one.
 * {@link #close()} closes every loader still open; close the {@link LoadedHandler}s first. Thread-safe.
 *
 * <p>Isolation keeps libraries apart; it is not a security boundary: a handler runs with the runtime's
 * permissions and can reach anything through reflection or the file system.
 */
public final class HandlerLoader implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HandlerLoader.class);

    /** How long a handler's class may take to load, initialise and construct before it is refused. */
    static final Duration LOAD_DEADLINE = Duration.ofSeconds(30);

    private final ClassLoader runtime = Handler.class.getClassLoader();
    /**
     * The class loaders open now: one per load, so each subscription and each generation of its code has its own
     * (its own statics), and releasing one closes exactly it. Guarded by {@code this}.
     */
    private final Set<HandlerClassLoader> open = Collections.newSetFromMap(new IdentityHashMap<>());

    private final JarLimits limits;
    private final Duration loadDeadline;
    private boolean closed;

    /** A loader whose handlers share the SDK and SLF4J classes of the runtime that loaded the SDK. */
    public HandlerLoader() {
        this(JarLimits.DEFAULT, LOAD_DEADLINE);
    }

    /**
     * A loader for one uploaded JAR (docs/live-code.md): at most {@link UploadedJar#MAX_ENTRIES} entries, each
     * within the usual entry limit. One per subscription generation, so that a retired generation's classes go with
     * its loader.
     */
    public static HandlerLoader forUploads() {
        return new HandlerLoader(
                new JarLimits(JarLimits.DEFAULT.maxEntryBytes(), UploadedJar.MAX_ENTRIES), LOAD_DEADLINE);
    }

    /** With other limits and deadline, so tests stay small and fast. */
    HandlerLoader(JarLimits limits, Duration loadDeadline) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.loadDeadline = Objects.requireNonNull(loadDeadline, "loadDeadline");
    }

    /**
     * The handlers a JAR (or every JAR of a folder) declares, without loading any class; for {@code validate}.
     *
     * @param jarOrFolder a handler JAR, or a folder holding the handler's JAR and its libraries' JARs
     * @return the declared class names in declaration order; empty when none is declared
     * @throws HandlerLoadException when the location does not exist, holds no JAR, or is not a JAR
     */
    List<String> declaredHandlers(Path jarOrFolder) throws HandlerLoadException {
        return HandlerJars.read(Objects.requireNonNull(jarOrFolder, "jarOrFolder"), limits)
                .declared();
    }

    /**
     * Loads and creates a handler; it is not opened yet.
     *
     * @param jarOrFolder a handler JAR, or a folder holding the handler's JAR and its libraries' JARs
     * @param className the handler to create; may be empty when the location declares exactly one
     * @return the handler with its class loader and message type
     * @throws HandlerLoadException when the handler cannot be found, loaded or created; the message says why
     * @throws IllegalStateException after {@link #close()}
     */
    public LoadedHandler load(Path jarOrFolder, Optional<String> className) throws HandlerLoadException {
        Objects.requireNonNull(jarOrFolder, "jarOrFolder");
        Objects.requireNonNull(className, "className");
        HandlerJars jars = HandlerJars.read(jarOrFolder, limits);
        String name = chooseHandler(jars, className);
        HandlerClassLoader loader = loaderFor(jars);
        Path location = jars.location();
        try {
            return load(jars, name, loader, location);
        } catch (HandlerLoadException | RuntimeException | Error e) {
            releaseLoader(loader);
            throw e;
        }
    }

    private LoadedHandler load(HandlerJars jars, String name, HandlerClassLoader loader, Path location)
            throws HandlerLoadException {
        LoadedHandler loaded = HandlerConstruction.run(location, name, loadDeadline, progress -> {
            try {
                Class<?> type = handlerClass(location, name, loader);
                MessageType.Resolution messageType = messageType(location, name, type);
                if (messageType.type().isEmpty()) {
                    throw HandlerLoadException.unresolvedMessageType(location, name, messageType.found());
                }
                // The context loader of every call into the handler, its constructor's first: a thread it starts
                // there inherits the net, not the loader, and cannot pin a retired generation.
                SafetyNetClassLoader net = new SafetyNetClassLoader(loader, name);
                Object handler = instantiate(location, name, type, net, progress);
                return new LoadedHandler(
                        name, handler, loader, net, messageType.type().get(), location, jars.versionOf(name));
            } catch (HandlerLoadException | LinkageError e) {
                // An oversized class entry surfaces as a failure to load whichever class needed it.
                Optional<HandlerLoadException> oversized = oversized(location, e);
                if (oversized.isPresent()) {
                    throw oversized.get();
                }
                throw e;
            }
        });
        log.debug(
                "Loaded handler {} {}from {}; messages are {}",
                name,
                loaded.version().map(v -> "version " + v + " ").orElse(""),
                location,
                loaded.messageType().getTypeName());
        return loaded;
    }

    /**
     * Says that {@code handler}, loaded here, is done with (closed): its class loader, its own, is closed, so that a
     * handler swapped out while others run on can be collected.
     */
    public void release(LoadedHandler handler) {
        if (handler.classLoader() instanceof HandlerClassLoader loader) {
            releaseLoader(loader);
        }
    }

    /** As {@link #release(LoadedHandler)}, for a Pulsar Function loaded here and closed. */
    public void release(LoadedFunction function) {
        if (function.classLoader() instanceof HandlerClassLoader loader) {
            releaseLoader(loader);
        }
    }

    private void releaseLoader(HandlerClassLoader loader) {
        synchronized (this) {
            if (!open.remove(loader)) {
                return;
            }
        }
        try {
            loader.close();
        } catch (IOException e) {
            log.warn("Could not close class loader {}; its JAR files may stay open", loader.getName(), e);
        }
    }

    /**
     * Loads and creates a Pulsar Function named by the manifest (no services file needed); it is not initialised.
     *
     * @param jarOrFolder the function's JAR, or a folder holding it and its libraries' JARs
     * @param className the class implementing {@code org.apache.pulsar.functions.api.Function<I, O>} or
     *     {@code java.util.function.Function<I, O>}
     * @return the function with its class loader, its input and output types, and what its JAR references
     * @throws HandlerLoadException when the class cannot be found, loaded or created; the message says why
     */
    public LoadedFunction loadFunction(Path jarOrFolder, String className) throws HandlerLoadException {
        Objects.requireNonNull(jarOrFolder, "jarOrFolder");
        Objects.requireNonNull(className, "className");
        HandlerJars jars = HandlerJars.read(jarOrFolder, limits);
        HandlerClassLoader loader = loaderFor(jars);
        Path location = jars.location();
        FunctionJarScan scan;
        try {
            scan = FunctionJarScan.of(jars.jars(), limits, className);
        } catch (IOException e) {
            throw HandlerLoadException.unreadable(location, location, e);
        }
        return HandlerConstruction.run(location, className, loadDeadline, progress -> {
            Class<?> type;
            try {
                type = Class.forName(className, false, loader);
            } catch (ClassNotFoundException e) {
                throw HandlerLoadException.functionMissing(location, className);
            } catch (LinkageError e) {
                throw HandlerLoadException.cannotLoad(location, className, e);
            }
            Class<?> pulsarFunction = apiInterface(LoadedFunction.PULSAR_FUNCTION, loader);
            Class<?> windowFunction = apiInterface(LoadedFunction.WINDOW_FUNCTION, loader);
            boolean pulsar = pulsarFunction != null && pulsarFunction.isAssignableFrom(type);
            boolean window = !pulsar && windowFunction != null && windowFunction.isAssignableFrom(type);
            Class<?> target = pulsar ? pulsarFunction : window ? windowFunction : java.util.function.Function.class;
            if (!target.isAssignableFrom(type)) {
                throw HandlerLoadException.notAFunction(location, className);
            }
            if (type.isInterface() || Modifier.isAbstract(type.getModifiers())) {
                throw HandlerLoadException.notConcrete(location, className);
            }
            if (!Modifier.isPublic(type.getModifiers())) {
                throw HandlerLoadException.notPublic(location, className);
            }
            MessageType.Resolution input;
            MessageType.Resolution output;
            try {
                input = MessageType.of(type, target, 0);
                output = MessageType.completedValue(type, target, 1);
            } catch (TypeNotPresentException | LinkageError e) {
                throw HandlerLoadException.cannotLoad(location, className, e);
            }
            if (input.type().isEmpty() || output.type().isEmpty()) {
                throw HandlerLoadException.unresolvedFunctionTypes(location, className, input.found(), output.found());
            }
            // A window's elements: a WindowFunction's input, or what a java.util.function.Function's collection holds.
            Optional<Class<?>> windowInput =
                    window ? input.type() : pulsar ? Optional.empty() : MessageType.collectionElement(type, target, 0);
            SafetyNetClassLoader net = new SafetyNetClassLoader(loader, className);
            Object instance = construct(location, className, type, net, progress);
            log.debug("Loaded function {} from {}: {} to {}", className, location, input.found(), output.found());
            return new LoadedFunction(
                    className,
                    instance,
                    pulsar,
                    loader,
                    net,
                    input.type().get(),
                    output.type().get(),
                    location,
                    jars.versionOfEntry(className.replace('.', '/') + ".class", limits),
                    scan,
                    window,
                    windowInput);
        });
    }

    /** The runtime's Functions API interface of that name, as the function's loader resolves it (parent-first). */
    private static Class<?> apiInterface(String name, ClassLoader loader) {
        try {
            return Class.forName(name, false, loader);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    /**
     * Creates an instance of a handler's or function's class with its public no-argument constructor, its static
     * initialiser and constructor running with {@code net} (over the code's own loader) as their context class
     * loader. The class is initialised apart from the constructor call so that a failing static initialiser is told
     * apart.
     */
    private static Object construct(
            Path location, String name, Class<?> type, SafetyNetClassLoader net, HandlerConstruction progress)
            throws HandlerLoadException {
        Constructor<?> constructor;
        try {
            constructor = type.getConstructor();
        } catch (NoSuchMethodException e) {
            throw HandlerLoadException.noPublicConstructor(location, name);
        } catch (LinkageError | TypeNotPresentException e) {
            throw HandlerLoadException.cannotLoad(location, name, e);
        }
        progress.enter(HandlerConstruction.Stage.INITIALISING);
        try (ContextClassLoader ignored = ContextClassLoader.swap(net)) {
            Class.forName(name, true, type.getClassLoader());
        } catch (ExceptionInInitializerError e) {
            throw HandlerLoadException.staticInitialiserFailed(location, name, e.getCause());
        } catch (ClassNotFoundException | LinkageError e) {
            throw HandlerLoadException.cannotLoad(location, name, e);
        }
        progress.enter(HandlerConstruction.Stage.CONSTRUCTING);
        try (ContextClassLoader ignored = ContextClassLoader.swap(net)) {
            return constructor.newInstance();
        } catch (InvocationTargetException e) {
            throw HandlerLoadException.constructorFailed(location, name, e.getCause());
        } catch (ReflectiveOperationException | LinkageError e) {
            throw HandlerLoadException.cannotLoad(location, name, e);
        }
    }

    /**
     * Closes every class loader this loader created; calls nothing on the handlers. Idempotent.
     */
    @Override
    public void close() {
        List<HandlerClassLoader> toClose;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = List.copyOf(open);
            open.clear();
        }
        for (HandlerClassLoader loader : toClose) {
            try {
                loader.close();
            } catch (IOException e) {
                log.warn("Could not close class loader {}; its JAR files may stay open", loader.getName(), e);
            }
        }
    }

    private static String chooseHandler(HandlerJars jars, Optional<String> className) throws HandlerLoadException {
        List<String> declared = jars.declared();
        if (declared.isEmpty()) {
            throw HandlerLoadException.noHandlerDeclared(jars.location(), jars.jarsOfFolder());
        }
        if (className.isPresent()) {
            if (!declared.contains(className.get())) {
                throw HandlerLoadException.notDeclared(jars.location(), className.get(), declared);
            }
            return declaredOnce(jars, className.get());
        }
        if (declared.size() > 1) {
            throw HandlerLoadException.severalDeclared(jars.location(), declared);
        }
        return declaredOnce(jars, declared.get(0));
    }

    // Only the first of two JARs would ever be looked in: which copy runs would hang on file names.
    private static String declaredOnce(HandlerJars jars, String className) throws HandlerLoadException {
        List<Path> declaring = jars.declaringJars(className);
        if (declaring.size() > 1) {
            throw HandlerLoadException.declaredInSeveralJars(jars.location(), className, declaring);
        }
        return className;
    }

    private synchronized HandlerClassLoader loaderFor(HandlerJars jars) throws HandlerLoadException {
        if (closed) {
            throw new IllegalStateException("the handler loader is closed");
        }
        HandlerClassLoader loader;
        try {
            loader = HandlerClassLoader.open(jars.loaderName(), jars.jars(), limits, runtime);
        } catch (JarLimitException e) {
            throw HandlerLoadException.jarLimit(jars.location(), e);
        } catch (IOException e) {
            throw HandlerLoadException.unreadable(jars.location(), jars.location(), e);
        }
        open.add(loader);
        return loader;
    }

    /** The refusal of an entry past the limit, if one is behind {@code error}, however deep. */
    private static Optional<HandlerLoadException> oversized(Path location, Throwable error) {
        for (Throwable cause = error.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof JarLimitException limit) {
                return Optional.of(HandlerLoadException.jarLimit(location, limit));
            }
        }
        return Optional.empty();
    }

    /** Loads the class without initialising it, so nothing of the handler runs before it is known to fit. */
    private static Class<?> handlerClass(Path location, String name, ClassLoader loader) throws HandlerLoadException {
        Class<?> type;
        try {
            type = Class.forName(name, false, loader);
        } catch (ClassNotFoundException e) {
            throw HandlerLoadException.classMissing(location, name, e);
        } catch (LinkageError e) {
            throw HandlerLoadException.cannotLoad(location, name, e);
        }
        if (!Handler.class.isAssignableFrom(type) && !BatchHandler.class.isAssignableFrom(type)) {
            throw HandlerLoadException.notAHandler(location, name);
        }
        if (type.isInterface() || Modifier.isAbstract(type.getModifiers())) {
            throw HandlerLoadException.notConcrete(location, name);
        }
        if (!Modifier.isPublic(type.getModifiers())) {
            throw HandlerLoadException.notPublic(location, name);
        }
        return type;
    }

    private static MessageType.Resolution messageType(Path location, String name, Class<?> type)
            throws HandlerLoadException {
        try {
            return BatchHandler.class.isAssignableFrom(type)
                    ? MessageType.of(type, BatchHandler.class, 0)
                    : MessageType.of(type);
        } catch (TypeNotPresentException | LinkageError e) {
            // Reading Handler<Order> loads Order; it may be missing from the JAR.
            throw HandlerLoadException.cannotLoad(location, name, e);
        }
    }

    /** A {@code Handler<Object>} or a {@code BatchHandler<Object>}, as {@code type} implements. */
    private static Object instantiate(
            Path location, String name, Class<?> type, SafetyNetClassLoader net, HandlerConstruction progress)
            throws HandlerLoadException {
        return construct(location, name, type, net, progress);
    }
}
