package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a subscription's code comes from and how its payloads are decoded for it.
 *
 * @param className the handler's class name; empty when the JAR declares exactly one (never for a function)
 * @param jar the handler JAR, or a folder of JARs, absolute
 * @param schema a schema override; empty to derive it from the handler's type argument
 * @param function whether the class is a Pulsar Function ({@code function:}) rather than an SDK handler
 * @param fromPackage the Pulsar package the JAR is fetched from, when {@code jar:} names one; {@code jar} is then
 *     where it is cached
 */
public record HandlerSource(
        Optional<String> className,
        Path jar,
        Optional<SchemaKind> schema,
        boolean function,
        Optional<PackageRef> fromPackage) {
    public HandlerSource {
        Objects.requireNonNull(className, "className");
        Objects.requireNonNull(jar, "jar");
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(fromPackage, "fromPackage");
        if (function && className.isEmpty()) {
            throw new IllegalArgumentException("a function is named by its class");
        }
    }

    /** A JAR on disk. */
    public HandlerSource(Optional<String> className, Path jar, Optional<SchemaKind> schema, boolean function) {
        this(className, jar, schema, function, Optional.empty());
    }

    /** An SDK handler's source. */
    public HandlerSource(Optional<String> className, Path jar, Optional<SchemaKind> schema) {
        this(className, jar, schema, false);
    }
}
