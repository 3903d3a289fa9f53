package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Message;

/** The two calls a settlement makes on a consumer; a port so the mapping can be tested without a broker. */
interface ConsumerCalls {
    void acknowledge(Message<?> message);

    void negativeAcknowledge(Message<?> message);
}
