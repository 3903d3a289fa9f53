package dev.settle.runtime.function;

import dev.settle.runtime.isolation.ContextClassLoader;
import java.lang.reflect.InvocationTargetException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.schema.SchemaInfo;
import org.apache.pulsar.functions.api.SerDe;

/**
 * A function's own {@link SerDe} as a Pulsar schema, as Pulsar Functions use one: the topic sees BYTES, and the
 * SerDe, from the function's JAR and run in its class loader, turns them into values and back.
 */
final class SerDeSchema implements Schema<Object> {
    private final SerDe<Object> serde;
    private final ClassLoader loader;
    private final String className;

    private SerDeSchema(SerDe<Object> serde, ClassLoader loader, String className) {
        this.serde = serde;
        this.loader = loader;
        this.className = className;
    }

    /**
     * Creates the SerDe {@code className} of the function's JAR with its public no-argument constructor.
     *
     * @throws IllegalStateException when it cannot be created ({@code settle validate} checks it first)
     */
    @SuppressWarnings("unchecked")
    static SerDeSchema create(String className, ClassLoader loader) {
        try (ContextClassLoader ignored = ContextClassLoader.swap(loader)) {
            Object serde =
                    Class.forName(className, true, loader).getConstructor().newInstance();
            return new SerDeSchema((SerDe<Object>) serde, loader, className);
        } catch (ReflectiveOperationException | LinkageError | ClassCastException e) {
            Throwable cause = e instanceof InvocationTargetException target ? target.getCause() : e;
            throw new IllegalStateException(
                    "the SerDe " + className + " could not be created: " + cause
                            + "; it needs a public no-argument constructor and must implement"
                            + " org.apache.pulsar.functions.api.SerDe",
                    cause);
        }
    }

    @Override
    public byte[] encode(Object value) {
        try (ContextClassLoader ignored = ContextClassLoader.swap(loader)) {
            return serde.serialize(value);
        }
    }

    @Override
    public Object decode(byte[] bytes) {
        try (ContextClassLoader ignored = ContextClassLoader.swap(loader)) {
            return serde.deserialize(bytes);
        }
    }

    @Override
    public Object decode(byte[] bytes, byte[] schemaVersion) {
        return decode(bytes);
    }

    @Override
    public SchemaInfo getSchemaInfo() {
        return Schema.BYTES.getSchemaInfo();
    }

    @Override
    public Schema<Object> clone() {
        return this;
    }

    @Override
    public String toString() {
        return "SerDe " + className;
    }
}
