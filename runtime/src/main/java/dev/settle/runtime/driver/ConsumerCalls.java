package dev.settle.runtime.driver;

/**
 * The two calls a settlement makes on a consumer of messages {@code M}; a port so the mapping can be tested, and
 * simulated, without a broker.
 */
interface ConsumerCalls<M> {
    void acknowledge(M message);

    void negativeAcknowledge(M message);
}
