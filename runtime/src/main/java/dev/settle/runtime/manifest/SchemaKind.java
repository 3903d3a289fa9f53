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

    public static Optional<SchemaKind> fromManifestName(String name) {
        return Arrays.stream(values()).filter(kind -> kind.manifestName.equals(name)).findFirst();
    }
}
