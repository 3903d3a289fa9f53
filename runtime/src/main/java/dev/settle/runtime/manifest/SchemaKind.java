package dev.settle.runtime.manifest;

import java.util.Arrays;
import java.util.Optional;

/** A manifest's {@code schema} override: how the payload is decoded for the handler. */
public enum SchemaKind {
    STRING("string"),
    BYTES("bytes"),
    JSON("json"),
    AVRO("avro");

    private final String manifestName;

    SchemaKind(String manifestName) {
        this.manifestName = manifestName;
    }

    public String manifestName() {
        return manifestName;
    }

    /**
     * The schema a handler's type argument gets when the manifest declares none: {@code String} is read as UTF-8,
     * {@code byte[]} as raw bytes, any other class as JSON of that class (docs/design.md, "Message types").
     */
    public static SchemaKind forMessageType(Class<?> type) {
        if (type == String.class) {
            return STRING;
        }
        if (type == byte[].class) {
            return BYTES;
        }
        return JSON;
    }

    public static Optional<SchemaKind> fromManifestName(String name) {
        return Arrays.stream(values()).filter(kind -> kind.manifestName.equals(name)).findFirst();
    }
}
