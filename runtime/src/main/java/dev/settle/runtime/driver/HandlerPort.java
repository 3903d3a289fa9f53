package dev.settle.runtime.driver;

import dev.settle.sdk.Outcome;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;

/**
 * The one way a driver reaches a handler. The driver loop knows nothing of the SDK's {@code Handler}, of Pulsar
 * Functions or of class loaders: an adapter does ({@link SdkHandlerPort}, the function adapter). Opening and
 * closing the handler is its owner's business, before the driver starts and after it stops.
 *
 * <p>The outcome may be known later than the call returns: a function's output still being published, or a
 * future the function returned. The driver holds the message's concurrency permit until the stage completes and
 * settles it then, on the thread that completes it; a handler that answers at once returns a completed stage and
 * is settled on the calling thread, as before.
 */
public interface HandlerPort {

    /** How the consumer decodes payloads for this handler. */
    Schema<?> schema();

    /**
     * Handles one delivery ({@code work.message()}) and says, now or later, what becomes of it. Every output of the
     * call is sent through {@link UnitOfWork#outputs(dev.settle.runtime.publish.Outputs)}.
     *
     * @return a stage completing with the outcome ({@code null} for none), or exceptionally with a failure (a
     *     {@link PayloadDecodeException} when the payload cannot be decoded); never {@code null}
     * @throws PayloadDecodeException when the payload cannot be decoded for the handler
     * @throws Exception whatever the handler threw, a failure like an exceptional stage
     */
    CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception;

    /**
     * How many deliveries one call of the code takes at most: 1 for a handler of one message; a batch handler's
     * {@code maxMessages}, whose deliveries each hold a permit while the batch gathers and runs
     * ({@link BatchGathering}). The driver allows {@code concurrency} times this many deliveries in flight.
     */
    default int deliveriesPerCall() {
        return 1;
    }

    /**
     * How many deliveries handed to this port wait for their call to start: a batch handler's open batch, called once
     * it holds {@code maxMessages} or its {@code maxWait} has passed on the runtime's clock. 0 for a handler of one
     * message, which is called at once. The test kit, whose clock stands still until the test moves it, stops handing
     * messages out when every delivery it has in flight waits so.
     */
    default int waitingForCall() {
        return 0;
    }

    /**
     * This port under another name in logs, traces and the journal, made before its first delivery: live code names
     * the generation it runs ("generation 3, sha256 ..."), which the journal reads a settlement's generation from. A
     * port that names no code of its own stays as it is.
     */
    default HandlerPort named(String name) {
        return this;
    }
}
