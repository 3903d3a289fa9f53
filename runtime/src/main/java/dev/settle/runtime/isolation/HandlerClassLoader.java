package dev.settle.runtime.isolation;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Enumeration;
import java.util.Objects;

/**
 * The class loader of one handler JAR (or folder of JARs), following {@link ClassLoadingPolicy}.
 *
 * <p>Its parent is the platform class loader, not the runtime's: ordinary parent-first delegation then means
 * "the JDK, then the handler's JARs", and nothing on the runtime's class path can leak in by accident. The
 * shared packages are the one exception and are answered by the runtime's loader alone; a handler that bundles
 * its own SDK or SLF4J API gets the runtime's copy, so the types it is called through are the runtime's.
 *
 * <p>Parallel capable: drivers of several subscriptions may load classes of the same JAR at once.
 */
final class HandlerClassLoader extends URLClassLoader {

    static {
        // Must run before the first instance exists; URLClassLoader itself is already registered.
        ClassLoader.registerAsParallelCapable();
    }

    private final ClassLoader runtime;

    /**
     * @param name shown in stack traces and heap dumps, such as {@code handler:orders.jar}
     * @param jars the handler's JARs, in look-up order
     * @param runtime the loader of the SDK, which answers for the shared packages
     */
    HandlerClassLoader(String name, URL[] jars, ClassLoader runtime) {
        super(name, jars, ClassLoader.getPlatformClassLoader());
        this.runtime = Objects.requireNonNull(runtime, "runtime");
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (ClassLoadingPolicy.forClass(name) == ClassLoadingPolicy.Source.RUNTIME) {
            return runtime.loadClass(name);
        }
        return super.loadClass(name, resolve);
    }

    @Override
    public URL getResource(String name) {
        if (ClassLoadingPolicy.forResource(name) == ClassLoadingPolicy.Source.RUNTIME) {
            return runtime.getResource(name);
        }
        return super.getResource(name);
    }

    @Override
    public Enumeration<URL> getResources(String name) throws IOException {
        if (ClassLoadingPolicy.forResource(name) == ClassLoadingPolicy.Source.RUNTIME) {
            return runtime.getResources(name);
        }
        return super.getResources(name);
    }
}
