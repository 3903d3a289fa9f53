package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SchemaKind;
import java.util.Optional;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.schema.SchemaDefinition;

/** The consumer schema for a handler's message type (docs/design.md, "Message types"). */
final class Schemas {
    private Schemas() {}

    /**
     * {@code String} is read as UTF-8, {@code byte[]} as raw bytes, any other class as JSON of that class; a
     * manifest's {@code schema} overrides the choice.
     */
    static Schema<?> forType(Class<?> type, Optional<SchemaKind> override) {
        SchemaKind kind = override.orElseGet(() -> SchemaKind.forMessageType(type));
        return switch (kind) {
            case STRING -> Schema.STRING;
            case BYTES -> Schema.BYTES;
            case JSON -> Schema.JSON(SchemaDefinition.builder().withPojo(type).withAlwaysAllowNull(true).build());
            case AVRO -> Schema.AVRO(SchemaDefinition.builder().withPojo(type).withAlwaysAllowNull(true).build());
        };
    }
}
