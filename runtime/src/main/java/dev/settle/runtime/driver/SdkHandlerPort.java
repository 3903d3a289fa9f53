package dev.settle.runtime.driver;

import dev.settle.runtime.isolation.ContextClassLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;

/**
 * An SDK {@link Handler} behind the driver's port: decodes the payload with the subscription's schema, wraps the
 * message as a {@link PulsarDelivery}, and calls the handler.
 */
public final class SdkHandlerPort implements HandlerPort {
    private final Call call;
    private final Schema<?> schema;
    private final boolean rawText;
    private final OptionalInt maxAttempts;
    private final String description;

    /** How the port calls the handler: a loaded handler swaps in its own context class loader around the call. */
    @FunctionalInterface
    public interface Call {
        Outcome handle(Delivery<Object> delivery) throws Exception;
    }

    /**
     * @param call calls the handler
     * @param messageType the handler's type argument
     * @param classLoader the loader of {@code messageType}, the context class loader while the schema is built
     * @param schemaOverride the manifest's {@code schema}, if any
     * @param maxAttempts the subscription's cap, shown to the handler
     * @param description names the handler in logs
     */
    public SdkHandlerPort(
            Call call,
            Class<?> messageType,
            ClassLoader classLoader,
            Optional<SchemaKind> schemaOverride,
            OptionalInt maxAttempts,
            String description) {
        this.call = call;
        this.maxAttempts = maxAttempts;
        this.description = description;
        // The JSON and Avro schemas reflect over the handler's own class: do it in the handler's loader.
        try (ContextClassLoader ignored = ContextClassLoader.swap(classLoader)) {
            this.schema = Schemas.forType(messageType, schemaOverride);
        }
        this.rawText = Schemas.readsRawText(messageType, schemaOverride);
    }

    /** The port of a handler loaded from its JAR, for one subscription. */
    public static SdkHandlerPort of(LoadedHandler loaded, SubscriptionSpec spec) {
        return new SdkHandlerPort(
                loaded::handle,
                loaded.messageType(),
                loaded.classLoader(),
                spec.handler().schema(),
                maxAttempts(spec),
                loaded.className());
    }

    /** The port of a handler on the runtime's own class path (tests, embedded use). */
    @SuppressWarnings("unchecked")
    public static <T> SdkHandlerPort of(Handler<T> handler, Class<T> messageType, SubscriptionSpec spec) {
        Handler<Object> untyped = (Handler<Object>) handler;
        return new SdkHandlerPort(
                untyped::handle,
                messageType,
                handler.getClass().getClassLoader(),
                spec.handler().schema(),
                maxAttempts(spec),
                handler.getClass().getName());
    }

    private static OptionalInt maxAttempts(SubscriptionSpec spec) {
        return spec.deadLetter()
                .map(deadLetter -> OptionalInt.of(deadLetter.maxAttempts()))
                .orElse(OptionalInt.empty());
    }

    @Override
    public Schema<?> schema() {
        return schema;
    }

    @Override
    public CompletionStage<Outcome> handle(Message<?> message) throws Exception {
        String as =
                rawText ? "UTF-8 text" : String.valueOf(schema.getSchemaInfo().getType());
        Object value;
        try {
            value = rawText ? rawText(message) : message.getValue();
        } catch (RuntimeException e) {
            throw new PayloadDecodeException(
                    "message " + message.getMessageId() + " on " + message.getTopicName() + " cannot be decoded as "
                            + as + ": " + e.getMessage(),
                    e);
        }
        if (value == null) {
            // Delivery.value() is never null: a JSON payload "null", or a message published with a null value,
            // has nothing to hand over.
            throw new PayloadDecodeException(
                    "message " + message.getMessageId() + " on " + message.getTopicName()
                            + " decoded to null as " + as + " (" + describe(message.getData())
                            + "); a handler is never handed a null value, so it is a failure",
                    null);
        }
        return CompletableFuture.completedFuture(call.handle(new PulsarDelivery<>(message, value, maxAttempts)));
    }

    private static String rawText(Message<?> message) {
        byte[] data = message.getData();
        return data == null ? null : Utf8Text.decode(data);
    }

    private static String describe(byte[] data) {
        if (data == null) {
            return "published with a null value";
        }
        // Its length only: payloads can hold what logs must not.
        return "a payload of " + data.length + " bytes, such as the JSON literal null";
    }

    @Override
    public String toString() {
        return description;
    }
}
