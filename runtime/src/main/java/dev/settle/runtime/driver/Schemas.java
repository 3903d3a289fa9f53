package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SchemaKind;
import java.util.Optional;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.schema.SchemaDefinition;

/** The consumer schema for a handler's message type (docs/design.md, "Message types"). */
final class Schemas {
    private Schemas() {}

    /**
     * {@code String} is read as the raw payload, which the port decodes as UTF-8 ({@link #readsRawText});
     * {@code byte[]} as raw bytes; any other class as JSON of that class. A manifest's {@code schema} overrides the
     * choice.
     */
    static Schema<?> forType(Class<?> type, Optional<SchemaKind> override) {
        if (readsRawText(type, override)) {
            return Schema.AUTO_CONSUME();
        }
        SchemaKind kind = override.orElseGet(() -> SchemaKind.forMessageType(type));
        return switch (kind) {
            case STRING -> Schema.STRING;
            case BYTES -> Schema.BYTES;
            case JSON ->
                Schema.JSON(SchemaDefinition.builder()
                        .withPojo(type)
                        .withAlwaysAllowNull(true)
                        .build());
            case AVRO ->
                Schema.AVRO(SchemaDefinition.builder()
                        .withPojo(type)
                        .withAlwaysAllowNull(true)
                        .build());
        };
    }

    /**
     * Whether a {@code String} handler takes its text from the raw payload rather than through {@code Schema.STRING}:
     * when the manifest declares no schema. It then consumes with {@code AUTO_CONSUME}, which the broker never checks
     * against the topic's schema and which registers none, so it fits a topic of plain bytes (the most common
     * producer), where a STRING consumer is refused once the topic holds messages, as well as a STRING or JSON one.
     * {@code Schema.BYTES} would fit as well, but the client gives dead letters the consumer's schema: with BYTES the
     * dead letters of a STRING topic would lose theirs; with AUTO_CONSUME they keep the source message's.
     */
    static boolean readsRawText(Class<?> type, Optional<SchemaKind> override) {
        return type == String.class && override.isEmpty();
    }
}
