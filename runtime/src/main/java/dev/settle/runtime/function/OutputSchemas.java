package dev.settle.runtime.function;

import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.schema.SchemaDefinition;

/** The schema {@code context.publish(topic, value)} sends a value with, chosen by its class. */
final class OutputSchemas {
    private OutputSchemas() {}

    static Schema<?> forValue(Object value) {
        if (value instanceof String) {
            return Schema.STRING;
        }
        if (value instanceof byte[]) {
            return Schema.BYTES;
        }
        if (value == null) {
            throw new IllegalArgumentException("context.publish was given a null value; publish a value");
        }
        return Schema.JSON(SchemaDefinition.builder()
                .withPojo(value.getClass())
                .withAlwaysAllowNull(true)
                .build());
    }
}
