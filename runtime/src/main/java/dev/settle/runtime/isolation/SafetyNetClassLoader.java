package dev.settle.runtime.isolation;

import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.URL;
import java.util.Collections;
import java.util.Enumeration;

/**
 * The thread context class loader a handler's calls run with: it delegates to the handler's own loader until the
 * handler is closed, then to nothing. A thread the handler started (which inherits its context loader) or a
 * library that kept the context loader then holds this small object, not the handler's loader with all its classes,
 * so a retired generation's loader can still be collected (Flink's {@code SafetyNetWrapperClassLoader} does the
 * same). After the cut, loading through it fails with a message that says why.
 *
 * <p>Thread-safe.
 */
final class SafetyNetClassLoader extends ClassLoader {
    static {
        ClassLoader.registerAsParallelCapable();
    }

    private final String handler;
    private volatile ClassLoader delegate;
    /** Which loader this net stood for, held weakly: the retired-loader check names a thread left holding it. */
    private final WeakReference<ClassLoader> wrapped;

    SafetyNetClassLoader(ClassLoader delegate, String handler) {
        super("safety-net of " + handler, null);
        this.delegate = delegate;
        this.handler = handler;
        this.wrapped = new WeakReference<>(delegate);
    }

    /** Whether this net stands (or stood, before the cut) for {@code loader}. */
    boolean wraps(ClassLoader loader) {
        return loader != null && wrapped.get() == loader;
    }

    /** Lets go of the handler's loader: what still holds this loader no longer holds that one. */
    void cut() {
        delegate = null;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        ClassLoader to = delegate;
        if (to == null) {
            throw new ClassNotFoundException(name + ": handler " + handler + " is closed; a thread or object that"
                    + " outlived it used its context class loader (stop the threads a handler starts in close())");
        }
        return to.loadClass(name);
    }

    @Override
    public URL getResource(String name) {
        ClassLoader to = delegate;
        return to == null ? null : to.getResource(name);
    }

    @Override
    public Enumeration<URL> getResources(String name) throws IOException {
        ClassLoader to = delegate;
        return to == null ? Collections.emptyEnumeration() : to.getResources(name);
    }
}
