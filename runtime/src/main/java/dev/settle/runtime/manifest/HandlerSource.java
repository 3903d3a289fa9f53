package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a subscription's code comes from and how its payloads are decoded for it.
 *
 * @param className the handler's class name; empty when the JAR declares exactly one
 * @param jar the handler JAR, or a folder of JARs, absolute
 * @param schema a schema override; empty to derive it from the handler's type argument
 */
public record HandlerSource(Optional<String> className, Path jar, Optional<SchemaKind> schema) {
    public HandlerSource {
        Objects.requireNonNull(className, "className");
        Objects.requireNonNull(jar, "jar");
        Objects.requireNonNull(schema, "schema");
    }
}
