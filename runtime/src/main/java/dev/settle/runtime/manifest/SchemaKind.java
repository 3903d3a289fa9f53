package dev.settle.runtime.manifest;

import java.util.Arrays;
import java.util.List;
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

    /**
     * Whether a payload decoded with this schema can be handed to a handler of {@code type}: {@code string} gives a
     * {@code String}, {@code bytes} a {@code byte[]}, {@code json} and {@code avro} an object of a class of the
     * handler's own. Anything else fails on every message with a {@code ClassCastException}, so it is refused
     * before the runtime starts.
     */
    public boolean fits(Class<?> type) {
        return switch (this) {
            case STRING -> type == String.class;
            case BYTES -> type == byte[].class;
            case JSON, AVRO -> type != String.class && type != byte[].class;
        };
    }

    /** The schemas a handler of {@code type} can take, in declaration order. */
    public static List<SchemaKind> fitting(Class<?> type) {
        return Arrays.stream(values()).filter(kind -> kind.fits(type)).toList();
    }

    public static Optional<SchemaKind> fromManifestName(String name) {
        return Arrays.stream(values())
                .filter(kind -> kind.manifestName.equals(name))
                .findFirst();
    }
}
