package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SchemaKind;
import java.util.Optional;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.schema.SchemaDefinition;

/** The consumer schema for a handler's message type (docs/design.md, "Message types"). */
final class Schemas {
    private Schemas() {}

    /**
     * {@code String} is read as raw bytes that the port decodes as UTF-8 ({@link #readsRawText}), {@code byte[]} as
     * raw bytes, any other class as JSON of that class; a manifest's {@code schema} overrides the choice.
     */
    static Schema<?> forType(Class<?> type, Optional<SchemaKind> override) {
        if (readsRawText(type, override)) {
            return Schema.BYTES;
        }
        SchemaKind kind = override.orElseGet(() -> SchemaKind.forMessageType(type));
        return switch (kind) {
            case STRING -> Schema.STRING;
            case BYTES -> Schema.BYTES;
            case JSON -> Schema.JSON(SchemaDefinition.builder().withPojo(type).withAlwaysAllowNull(true).build());
            case AVRO -> Schema.AVRO(SchemaDefinition.builder().withPojo(type).withAlwaysAllowNull(true).build());
        };
    }

    /**
     * Whether a {@code String} handler takes its text from the raw payload rather than through {@code Schema.STRING}:
     * when the manifest declares no schema. A consumer with {@code Schema.BYTES} registers no schema, so it fits a
     * topic of plain bytes (the most common producer) as well as one whose schema is STRING or JSON, where a
     * STRING consumer is refused by a topic that already holds schema-less messages.
     */
    static boolean readsRawText(Class<?> type, Optional<SchemaKind> override) {
        return type == String.class && override.isEmpty();
    }
}
