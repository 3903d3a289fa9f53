package dev.settle.runtime.manifest;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a Pulsar Function ({@code function:}) has beyond a handler: where its return values go and which secrets
 * it may read.
 *
 * @param output where return values are published; empty to publish none (a returned value is then logged once
 *     and dropped)
 * @param outputSchema a schema override for {@code output}; empty to derive it from the function's output type
 * @param secrets secret names ({@code context.getSecret(name)}) to the environment variables that hold them
 */
public record FunctionSettings(
        Optional<String> output, Optional<SchemaKind> outputSchema, Map<String, String> secrets) {
    /** A subscription without {@code function:} settings. */
    public static final FunctionSettings NONE = new FunctionSettings(Optional.empty(), Optional.empty(), Map.of());

    public FunctionSettings {
        Objects.requireNonNull(output, "output");
        Objects.requireNonNull(outputSchema, "outputSchema");
        secrets = Map.copyOf(secrets);
    }
}
