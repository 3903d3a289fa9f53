package dev.settle.runtime.manifest;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a Pulsar Function ({@code function:}) has beyond a handler: where its return values go, how its payloads are
 * (de)serialised, which secrets it may read, where its state is kept and which instance of how many it is.
 *
 * @param output where return values are published; empty to publish none (a returned value is then logged once
 *     and dropped)
 * @param outputSchema a schema override for {@code output}; empty to derive it from the function's output type
 * @param secrets secret names ({@code context.getSecret(name)}) to the environment variables that hold them
 * @param inputSerdes consumed topic to the class of the function's JAR that implements
 *     {@code org.apache.pulsar.functions.api.SerDe} for it ({@code --custom-serde-inputs}); empty for none, else
 *     one for every consumed topic
 * @param outputSerde the {@code SerDe} class return values are serialised with ({@code --output-serde-classname})
 * @param inputProperties whether outputs carry {@code __pfn_input_topic__} and {@code __pfn_input_msg_id__}, as
 *     Pulsar Functions' outputs do
 * @param state the compacted topic the function's state ({@code putState}, {@code incrCounter}, ...) is kept in;
 *     empty for none (those methods then throw)
 * @param instanceId what {@code context.getInstanceId()} returns
 * @param numInstances what {@code context.getNumInstances()} returns
 * @param window the window a {@code WindowFunction} (or a {@code java.util.function.Function} of a collection) is
 *     called with ({@code windowConfig}); empty for a function called with each message
 */
public record FunctionSettings(
        Optional<String> output,
        Optional<SchemaKind> outputSchema,
        Map<String, String> secrets,
        Map<String, String> inputSerdes,
        Optional<String> outputSerde,
        boolean inputProperties,
        Optional<String> state,
        int instanceId,
        int numInstances,
        Optional<WindowSettings> window) {
    /** A subscription without {@code function:} settings. */
    public static final FunctionSettings NONE = new FunctionSettings(Optional.empty(), Optional.empty(), Map.of());

    public FunctionSettings {
        Objects.requireNonNull(output, "output");
        Objects.requireNonNull(outputSchema, "outputSchema");
        secrets = Map.copyOf(secrets);
        inputSerdes = Map.copyOf(inputSerdes);
        Objects.requireNonNull(outputSerde, "outputSerde");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(window, "window");
    }

    /** An output, its schema and secrets, with every other setting at its default. */
    public FunctionSettings(Optional<String> output, Optional<SchemaKind> outputSchema, Map<String, String> secrets) {
        this(output, outputSchema, secrets, Map.of(), Optional.empty(), true, Optional.empty(), 0, 1, Optional.empty());
    }
}
