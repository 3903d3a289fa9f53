package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.RedeliveryBackoff;

/**
 * Redeliver a negatively acknowledged message at once.
 *
 * <p>The client holds a plain negative ack for {@code negativeAckRedeliveryDelay} (one minute by default, never
 * under 100 ms); a backoff that answers zero is not held to that floor, and the message is back within a few
 * milliseconds. The dead-letter cap still applies: it is decided by the redelivery count, not by the delay.
 */
final class ZeroRedeliveryBackoff implements RedeliveryBackoff {
    static final ZeroRedeliveryBackoff INSTANCE = new ZeroRedeliveryBackoff();

    private ZeroRedeliveryBackoff() {}

    @Override
    public long next(int redeliveryCount) {
        return 0;
    }
}
