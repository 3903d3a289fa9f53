package dev.settle.runtime.driver;

import dev.settle.runtime.isolation.ContextClassLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.Optional;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;

/**
 * Turns a message's payload into the value a handler or function takes, with the schema the consumer presents
 * (docs/design.md, "Message types"); one for every port, so SDK handlers and Pulsar Functions decode alike.
 */
public final class PayloadDecoder {
    private final Schema<?> schema;
    private final boolean rawText;
    /** Decode with {@link #schema} rather than the consumer's: see {@link #withOwnSchema()}. */
    private final boolean ownSchema;

    private PayloadDecoder(Schema<?> schema, boolean rawText, boolean ownSchema) {
        this.schema = schema;
        this.rawText = rawText;
        this.ownSchema = ownSchema;
    }

    /**
     * @param messageType the type the code takes
     * @param classLoader the loader of {@code messageType}, the context class loader while the schema is built
     * @param schemaOverride the manifest's {@code schema}, if any
     */
    public static PayloadDecoder of(
            Class<?> messageType, ClassLoader classLoader, Optional<SchemaKind> schemaOverride) {
        // The JSON and Avro schemas reflect over the handler's own class: do it in the handler's loader.
        try (ContextClassLoader ignored = ContextClassLoader.swap(classLoader)) {
            return new PayloadDecoder(
                    Schemas.forType(messageType, schemaOverride),
                    Schemas.readsRawText(messageType, schemaOverride),
                    false);
        }
    }

    /** The decoder of a handler loaded from its JAR: its message type, in its loader, as {@code spec} says. */
    static PayloadDecoder of(LoadedHandler loaded, SubscriptionSpec spec) {
        return of(loaded.messageType(), loaded.classLoader(), spec.handler().schema());
    }

    /**
     * This decoder, decoding each payload with its own schema instead of the consumer's: for code swapped in while
     * the consumer stays open, whose message classes are another class loader's than those the consumer's schema
     * was built with.
     */
    public PayloadDecoder withOwnSchema() {
        return new PayloadDecoder(schema, rawText, true);
    }

    /** The schema the consumer subscribes with. */
    public Schema<?> schema() {
        return schema;
    }

    /**
     * The message's value, never {@code null}.
     *
     * @throws PayloadDecodeException when the payload cannot be decoded, or decodes to null
     */
    public Object decode(Message<?> message) throws PayloadDecodeException {
        String as =
                rawText ? "UTF-8 text" : String.valueOf(schema.getSchemaInfo().getType());
        Object value;
        try {
            value = rawText ? rawText(message) : ownSchema ? decodeOwn(message) : message.getValue();
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
        return value;
    }

    /**
     * The schema a producer of {@code type} publishes with: {@code String} as Pulsar's STRING, {@code byte[]} as
     * BYTES, any other class as JSON; the manifest's {@code outputSchema} overrides it.
     */
    public static Schema<?> forOutput(Class<?> type, ClassLoader classLoader, Optional<SchemaKind> override) {
        try (ContextClassLoader ignored = ContextClassLoader.swap(classLoader)) {
            return Schemas.forType(type, Optional.of(override.orElseGet(() -> SchemaKind.forMessageType(type))));
        }
    }

    private Object decodeOwn(Message<?> message) {
        byte[] data = message.getData();
        return data == null ? null : schema.decode(data);
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
}
