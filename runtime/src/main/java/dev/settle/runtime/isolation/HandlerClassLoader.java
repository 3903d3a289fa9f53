package dev.settle.runtime.isolation;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.Path;
import java.security.CodeSigner;
import java.security.CodeSource;
import java.security.SecureClassLoader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.jar.Attributes;
import java.util.jar.Manifest;

/**
 * The class loader of one handler JAR (or folder of JARs), following {@link ClassLoadingPolicy}.
 *
 * <p>Its parent is the platform class loader, not the runtime's: ordinary parent-first delegation then means
 * "the JDK, then the handler's JARs", and nothing on the runtime's class path can leak in by accident. The
 * shared packages are the one exception and are answered by the runtime's loader alone; a handler that bundles
 * its own SDK or SLF4J API gets the runtime's copy, so the types it is called through are the runtime's.
 *
 * <p>Reads its JARs itself through {@link BoundedZip} rather than being a {@code URLClassLoader}: that one sizes
 * a class's byte array from the zip header and inflates without a bound, so one crafted entry is an
 * {@link OutOfMemoryError} in {@code validate}. Here a class or a resource read through
 * {@link #getResourceAsStream} stops at {@link JarLimits#maxEntryBytes()}. {@link #getResource} still answers
 * standard {@code jar:} URLs, which libraries parse; a stream opened from such a URL is the JDK's.
 *
 * <p>Parallel capable: drivers of several subscriptions may load classes of the same JAR at once.
 */
final class HandlerClassLoader extends SecureClassLoader implements AutoCloseable {

    static {
        // Must run before the first instance exists; SecureClassLoader itself is already registered.
        ClassLoader.registerAsParallelCapable();
    }

    private final ClassLoader runtime;
    private final List<BoundedZip> jars;
    private final List<CodeSource> codeSources;

    /**
     * Opens every JAR; closes those already open when one fails.
     *
     * @param name shown in stack traces and heap dumps, such as {@code handler:orders.jar}
     * @param jars the handler's JARs, in look-up order
     * @param runtime the loader of the SDK, which answers for the shared packages
     */
    static HandlerClassLoader open(String name, List<Path> jars, JarLimits limits, ClassLoader runtime)
            throws IOException {
        List<BoundedZip> opened = new ArrayList<>();
        try {
            for (Path jar : jars) {
                opened.add(BoundedZip.open(jar, limits));
            }
        } catch (IOException | RuntimeException e) {
            for (BoundedZip zip : opened) {
                zip.close();
            }
            throw e;
        }
        return new HandlerClassLoader(name, opened, runtime);
    }

    private HandlerClassLoader(String name, List<BoundedZip> jars, ClassLoader runtime) {
        super(name, ClassLoader.getPlatformClassLoader());
        this.runtime = Objects.requireNonNull(runtime, "runtime");
        this.jars = List.copyOf(jars);
        List<CodeSource> sources = new ArrayList<>();
        for (BoundedZip jar : jars) {
            sources.add(new CodeSource(fileUrl(jar.path()), (CodeSigner[]) null));
        }
        this.codeSources = List.copyOf(sources);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (ClassLoadingPolicy.forClass(name) == ClassLoadingPolicy.Source.RUNTIME) {
            return runtime.loadClass(name);
        }
        return super.loadClass(name, resolve);
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        String entry = name.replace('.', '/') + ".class";
        for (int i = 0; i < jars.size(); i++) {
            BoundedZip jar = jars.get(i);
            Optional<byte[]> bytes;
            try {
                bytes = jar.read(entry);
            } catch (JarLimitException e) {
                throw new OversizedEntryError(e);
            } catch (IOException | IllegalStateException e) {
                // IllegalStateException: the loader was closed under a running handler.
                throw new ClassNotFoundException(name + " in " + jar.path(), e);
            }
            if (bytes.isPresent()) {
                definePackageOf(name, jar);
                byte[] b = bytes.get();
                return defineClass(name, b, 0, b.length, codeSources.get(i));
            }
        }
        throw new ClassNotFoundException(name);
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

    @Override
    public InputStream getResourceAsStream(String name) {
        Objects.requireNonNull(name, "name");
        if (ClassLoadingPolicy.forResource(name) == ClassLoadingPolicy.Source.RUNTIME) {
            return runtime.getResourceAsStream(name);
        }
        InputStream platform = getParent().getResourceAsStream(name);
        if (platform != null) {
            return platform;
        }
        for (BoundedZip jar : jars) {
            try {
                Optional<InputStream> in = jar.stream(name);
                if (in.isPresent()) {
                    return in.get();
                }
            } catch (IOException | IllegalStateException e) {
                return null;
            }
        }
        return null;
    }

    @Override
    protected URL findResource(String name) {
        for (BoundedZip jar : jars) {
            if (jar.contains(name)) {
                return entryUrl(jar.path(), name);
            }
        }
        return null;
    }

    @Override
    protected Enumeration<URL> findResources(String name) {
        List<URL> found = new ArrayList<>();
        for (BoundedZip jar : jars) {
            if (jar.contains(name)) {
                found.add(entryUrl(jar.path(), name));
            }
        }
        return Collections.enumeration(found);
    }

    /** Closes every JAR; classes already loaded stay usable, new ones cannot be found. */
    @Override
    public void close() throws IOException {
        IOException failed = null;
        for (BoundedZip jar : jars) {
            try {
                jar.close();
            } catch (IOException e) {
                failed = e;
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    // As URLClassLoader does: a package takes its title, version and vendor from the JAR's manifest, its own
    // section (Name: com/acme/orders/) before the main attributes.
    private void definePackageOf(String className, BoundedZip jar) {
        int dot = className.lastIndexOf('.');
        if (dot < 0) {
            return;
        }
        String packageName = className.substring(0, dot);
        if (getDefinedPackage(packageName) != null) {
            return;
        }
        Optional<Manifest> manifest = jar.manifest();
        try {
            if (manifest.isEmpty()) {
                definePackage(packageName, null, null, null, null, null, null, null);
                return;
            }
            Attributes own = manifest.get().getAttributes(packageName.replace('.', '/') + "/");
            Attributes main = manifest.get().getMainAttributes();
            definePackage(
                    packageName,
                    attribute(own, main, Attributes.Name.SPECIFICATION_TITLE),
                    attribute(own, main, Attributes.Name.SPECIFICATION_VERSION),
                    attribute(own, main, Attributes.Name.SPECIFICATION_VENDOR),
                    attribute(own, main, Attributes.Name.IMPLEMENTATION_TITLE),
                    attribute(own, main, Attributes.Name.IMPLEMENTATION_VERSION),
                    attribute(own, main, Attributes.Name.IMPLEMENTATION_VENDOR),
                    null);
        } catch (IllegalArgumentException raced) {
            // Another thread defined it first: parallel capable loaders may race here.
        }
    }

    private static String attribute(Attributes own, Attributes main, Attributes.Name name) {
        String value = own == null ? null : own.getValue(name);
        return value != null ? value : main.getValue(name);
    }

    private static URL fileUrl(Path jar) {
        try {
            return jar.toUri().toURL();
        } catch (MalformedURLException e) {
            // A path from the default file system always makes a file: URL.
            throw new UncheckedIOException(e);
        }
    }

    private static URL entryUrl(Path jar, String name) {
        try {
            return new URL("jar:" + jar.toUri() + "!/" + name);
        } catch (MalformedURLException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A class entry past the limit. A {@link ClassFormatError}, as a class file that cannot be defined is one;
     * {@link HandlerLoader} finds the {@link JarLimitException} behind it to name the JAR and the entry.
     */
    static final class OversizedEntryError extends ClassFormatError {
        private static final long serialVersionUID = 1L;

        OversizedEntryError(JarLimitException cause) {
            super(cause.getMessage());
            initCause(cause);
        }
    }
}
