package dev.settle.runtime.driver;

/**
 * A subscription cannot be created and waiting will not change that: the topic refuses the handler's schema, or
 * the client refuses a setting. The message names the subscription, its topics and the broker's reason; a schema
 * conflict's cause is the {@link SchemaConflictException} that says how to fix it.
 */
public final class SubscribeRefusedException extends Exception {
    SubscribeRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
