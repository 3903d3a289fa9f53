package dev.settle.runtime.isolation;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A Pulsar Function ({@code function:} in the manifest) created in its JAR's class loader, not yet initialised.
 * The adapter that calls it lives with the driver; this package only finds, checks and constructs it, by name, so
 * that it knows nothing of Pulsar's types.
 *
 * @param className the function's class name
 * @param instance the function: an {@code org.apache.pulsar.functions.api.Function} or a
 *     {@code java.util.function.Function}
 * @param pulsarFunction whether {@code instance} is a Pulsar Function (it takes a {@code Context})
 * @param classLoader the loader of the function's JAR
 * @param contextLoader the context class loader of every call into the function (its constructor's too): a safety
 *     net over {@code classLoader}, let go of by {@link #cutContextLoader()} once the function is closed, so a thread
 *     the function left behind does not pin its loader
 * @param inputType the function's input type argument, loaded by {@code classLoader}
 * @param outputType the function's output type argument; {@code Void} for none
 * @param jar the JAR or folder of JARs it came from, absolute
 * @param version the {@code Implementation-Version} of the declaring JAR
 * @param scan what the JAR's class files reference that Settle cannot serve, and the API copies it bundles
 * @param windowFunction whether {@code instance} is an {@code org.apache.pulsar.functions.api.WindowFunction}, called
 *     with a window of records instead of one value (then {@code pulsarFunction} is false)
 * @param windowInput the type of a window's elements, when the function can be called with windows: a {@code
 *     WindowFunction}'s input, or the {@code E} of a {@code java.util.function.Function<Collection<E>, O>}
 */
public record LoadedFunction(
        String className,
        Object instance,
        boolean pulsarFunction,
        ClassLoader classLoader,
        ClassLoader contextLoader,
        Class<?> inputType,
        Class<?> outputType,
        Path jar,
        Optional<String> version,
        FunctionJarScan scan,
        boolean windowFunction,
        Optional<Class<?>> windowInput) {

    /** The name of the Pulsar Functions interface, which this package never links against. */
    public static final String PULSAR_FUNCTION = "org.apache.pulsar.functions.api.Function";
    /** The name of the Functions API's window function interface. */
    public static final String WINDOW_FUNCTION = "org.apache.pulsar.functions.api.WindowFunction";

    public LoadedFunction {
        Objects.requireNonNull(className, "className");
        Objects.requireNonNull(instance, "instance");
        Objects.requireNonNull(classLoader, "classLoader");
        Objects.requireNonNull(contextLoader, "contextLoader");
        Objects.requireNonNull(inputType, "inputType");
        Objects.requireNonNull(outputType, "outputType");
        Objects.requireNonNull(jar, "jar");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(scan, "scan");
        Objects.requireNonNull(windowInput, "windowInput");
    }

    /** A function made in code (the test kit's), its context class loader a safety net of its own. */
    public LoadedFunction(
            String className,
            Object instance,
            boolean pulsarFunction,
            ClassLoader classLoader,
            Class<?> inputType,
            Class<?> outputType,
            Path jar,
            Optional<String> version,
            FunctionJarScan scan,
            boolean windowFunction,
            Optional<Class<?>> windowInput) {
        this(
                className,
                instance,
                pulsarFunction,
                classLoader,
                new SafetyNetClassLoader(classLoader, className),
                inputType,
                outputType,
                jar,
                version,
                scan,
                windowFunction,
                windowInput);
    }

    /**
     * Lets go of the function's loader from its context class loader: what a thread or library kept of it no longer
     * holds the loader. Once the function is closed.
     */
    public void cutContextLoader() {
        if (contextLoader instanceof SafetyNetClassLoader net) {
            net.cut();
        }
    }

    /** The {@code Context} methods the JAR's classes call that Settle does not serve, each with its callers. */
    public List<FunctionJarScan.Reference> unsupportedCalls() {
        return scan.unsupported();
    }

    @Override
    public String toString() {
        return className + version.map(v -> " " + v).orElse("") + " from " + jar;
    }
}
