package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An SDK {@link Handler} behind the driver's port: decodes the payload, builds the {@link PulsarDelivery}, and
 * runs every call with the handler's class loader as the thread's context class loader.
 */
public final class SdkHandlerPort implements HandlerPort {
    private static final Logger log = LoggerFactory.getLogger(SdkHandlerPort.class);

    private final Handler<Object> handler;
    private final ClassLoader classLoader;
    private final Schema<?> schema;
    private final OptionalInt maxAttempts;
    private final String description;

    /**
     * @param handler an opened handler
     * @param classLoader the handler's class loader, set as context class loader around each call
     * @param messageType the handler's type argument
     * @param schemaOverride the manifest's {@code schema}, if any
     * @param maxAttempts the subscription's cap, shown to the handler
     */
    @SuppressWarnings("unchecked")
    public SdkHandlerPort(
            Handler<?> handler,
            ClassLoader classLoader,
            Class<?> messageType,
            Optional<SchemaKind> schemaOverride,
            OptionalInt maxAttempts) {
        this.handler = (Handler<Object>) handler;
        this.classLoader = classLoader;
        this.maxAttempts = maxAttempts;
        this.description = handler.getClass().getName();
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(classLoader);
        try {
            // The JSON and Avro schemas reflect over the handler's own class: do it in the handler's loader.
            this.schema = Schemas.forType(messageType, schemaOverride);
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    @Override
    public Schema<?> schema() {
        return schema;
    }

    @Override
    public Outcome handle(Message<?> message) throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(classLoader);
        try {
            Object value;
            try {
                value = message.getValue();
            } catch (RuntimeException e) {
                throw new PayloadDecodeException("message " + message.getMessageId() + " on " + message.getTopicName()
                        + " cannot be decoded as " + schema.getSchemaInfo().getType() + ": " + e.getMessage(), e);
            }
            return handler.handle(new PulsarDelivery<>(message, value, maxAttempts));
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    @Override
    public void close() {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(classLoader);
        try {
            handler.close();
        } catch (Exception | LinkageError e) {
            log.warn("handler {} failed to close; going on stopping", description, e);
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
