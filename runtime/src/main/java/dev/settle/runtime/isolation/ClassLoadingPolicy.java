package dev.settle.runtime.isolation;

import java.util.List;

/**
 * Which side a handler's class or resource comes from, decided by its name alone.
 *
 * <p>Only the SDK ({@code dev.settle.sdk}), the SLF4J API ({@code org.slf4j}) and, for Pulsar Functions, the
 * Functions and client API packages ({@link #SHARED_PACKAGES}) are shared with the runtime:
 * a handler must see the very same {@code Handler} and {@code Outcome} classes the runtime calls it through,
 * and must log through the runtime's SLF4J binding. Everything else is the handler's own: its JARs behind the
 * platform class loader, so JDK classes resolve as usual while the runtime's Pulsar client, SnakeYAML,
 * Prometheus and logback stay invisible (Flink's {@code ComponentClassLoader} draws the same line).
 *
 * <p>Packages match whole segments: {@code dev.settle.sdkx.Foo} and {@code org.slf4j2.Foo} are the handler's.
 */
final class ClassLoadingPolicy {

    /** Where a name is looked up. */
    enum Source {
        /** The loader that loaded the SDK, and nothing else: a handler cannot replace or extend these packages. */
        RUNTIME,
        /**
         * The handler's own loader: the platform class loader first (JDK classes cannot be shadowed), then the
         * handler's JARs.
         */
        HANDLER
    }

    /**
     * The SDK and SLF4J; and for Pulsar Functions, the Functions API and the client API packages its signatures
     * expose ({@code Record.getMessage()}, {@code Context.newOutputMessage(topic, Schema)}), together with the
     * client's {@code internal} bridge that {@code Schema.STRING} and friends go through: a function calls the
     * runtime's Pulsar client through them, so a copy bundled in the function's JAR must not shadow them.
     */
    private static final List<String> SHARED_PACKAGES = List.of(
            "dev.settle.sdk",
            "org.slf4j",
            "org.apache.pulsar.functions.api",
            "org.apache.pulsar.client.api",
            "org.apache.pulsar.client.internal",
            "org.apache.pulsar.common.schema",
            "org.apache.pulsar.common.api",
            "org.apache.pulsar.common.classification");

    private static final List<String> SHARED_CLASS_PREFIXES =
            SHARED_PACKAGES.stream().map(p -> p + '.').toList();

    private static final List<String> SHARED_RESOURCE_PREFIXES =
            SHARED_PACKAGES.stream().map(p -> p.replace('.', '/') + '/').toList();

    private ClassLoadingPolicy() {}

    /**
     * The source of a class, by binary name ({@code org.slf4j.Logger}, {@code com.acme.Outer$Inner}).
     */
    static Source forClass(String className) {
        return startsWithAny(className, SHARED_CLASS_PREFIXES);
    }

    /**
     * The source of a resource, by its {@link ClassLoader#getResource(String)} name ({@code org/slf4j/Logger.class},
     * {@code META-INF/services/dev.settle.sdk.Handler}); the same rule as {@link #forClass}, with {@code /}
     * between segments, so a class file and its class never come from different sides.
     */
    static Source forResource(String resourceName) {
        return startsWithAny(resourceName, SHARED_RESOURCE_PREFIXES);
    }

    // Called on every class load of every handler: a few startsWith calls, no allocation.
    private static Source startsWithAny(String name, List<String> prefixes) {
        for (int i = 0; i < prefixes.size(); i++) {
            if (name.startsWith(prefixes.get(i))) {
                return Source.RUNTIME;
            }
        }
        return Source.HANDLER;
    }
}
