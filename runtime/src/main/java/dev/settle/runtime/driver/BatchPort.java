package dev.settle.runtime.driver;

import java.util.List;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;

/**
 * The one way {@link BatchGathering} reaches a batch handler: one call for several deliveries, an answer for each. The
 * gathering knows nothing of the SDK's {@code BatchHandler}: {@link SdkBatchPort} does.
 */
interface BatchPort {

    /** How the consumer decodes payloads for this handler. */
    Schema<?> schema();

    /**
     * Calls the handler once with {@code batch} (at least one delivery, in order received).
     *
     * @return an answer for each delivery of {@code batch}, in its order: a delivery whose payload cannot be decoded
     *     fails alone and is not handed to the handler; a result the runtime refuses fails every delivery
     * @throws Exception whatever the handler threw: the batch failed as a whole, saying nothing of which delivery
     */
    List<BatchAnswer> call(List<UnitOfWork<Message<?>>> batch) throws Exception;
}
