package dev.settle.test;

import java.nio.charset.StandardCharsets;
import org.apache.pulsar.client.api.Schema;

/** A producer's side of a subscription's schema: what {@code send(value)} publishes, and how the kit reads it back. */
final class Payloads {
    private static final Class<?> AUTO_CONSUME = Schema.AUTO_CONSUME().getClass();

    private Payloads() {}

    /** Whether the subscription reads raw text (a {@code Handler<String>} without a declared schema). */
    static boolean readsRawText(Schema<?> readerSchema) {
        return readerSchema.getClass() == AUTO_CONSUME;
    }

    /**
     * {@code byte[]} as published (any payload, also one the handler cannot decode); a {@code String} as UTF-8
     * for a text subscription; anything else encoded with the subscription's schema, as a producer of that schema
     * would.
     */
    @SuppressWarnings("unchecked")
    static byte[] encode(Schema<?> readerSchema, Object value) {
        if (value == null) {
            throw new IllegalArgumentException("a message needs a value; to test a null payload send new byte[0]");
        }
        if (value instanceof byte[] bytes) {
            return bytes.clone();
        }
        if (readsRawText(readerSchema)) {
            if (value instanceof String text) {
                return text.getBytes(StandardCharsets.UTF_8);
            }
            throw new IllegalArgumentException("this subscription's handler takes a String: send a String or byte[],"
                    + " not a " + value.getClass().getName());
        }
        return ((Schema<Object>) readerSchema).encode(value);
    }

    /** The payload as the subscription decodes it, or {@code null} when it cannot. */
    static Object decode(Schema<?> readerSchema, byte[] data) {
        if (readsRawText(readerSchema)) {
            return new String(data, StandardCharsets.UTF_8);
        }
        try {
            return readerSchema.decode(data);
        } catch (RuntimeException e) {
            return null;
        }
    }
}
