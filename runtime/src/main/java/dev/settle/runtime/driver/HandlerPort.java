package dev.settle.runtime.driver;

import dev.settle.sdk.Outcome;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;

/**
 * The one way a driver reaches a handler. The driver loop knows nothing of the SDK's {@code Handler} or of class
 * loaders: an adapter does ({@link SdkHandlerPort}; later, one for Pulsar Functions). Opening and closing the
 * handler is its owner's business, before the driver starts and after it stops.
 */
public interface HandlerPort {

    /** How the consumer decodes payloads for this handler. */
    Schema<?> schema();

    /**
     * Handles one message and says what becomes of it.
     *
     * @return the outcome, or {@code null} for none
     * @throws PayloadDecodeException when the payload cannot be decoded for the handler
     * @throws Exception whatever the handler threw
     */
    Outcome handle(Message<?> message) throws Exception;
}
