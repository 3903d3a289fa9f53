package dev.settle.runtime.driver;

import java.util.concurrent.CompletionStage;

/**
 * The two calls a settlement makes on a consumer of messages {@code M}; a port so the mapping can be tested, and
 * simulated (the test kit's broker), without a broker.
 */
public interface ConsumerCalls<M> {
    /**
     * Acknowledges {@code message}.
     *
     * @return completes once the consumer has taken the acknowledgement (it may send it later, grouped);
     *     exceptionally when it refused it
     */
    CompletionStage<Void> acknowledge(M message);

    void negativeAcknowledge(M message);
}
