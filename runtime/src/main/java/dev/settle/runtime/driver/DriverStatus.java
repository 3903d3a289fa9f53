package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Duration;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerStats;
import org.apache.pulsar.client.impl.ConsumerImpl;

/**
 * What a {@link SubscriptionDriver} shows of itself while it runs, for {@code /readyz}, the metrics and a test that
 * waited in vain: the consumer's connection and queue, the calls running, the messages held behind their key or by the
 * outage circuit breaker. It reads the driver's parts and changes nothing.
 */
record DriverStatus(SubscriptionSpec spec, ReceiveLoop loop, Processing processing) {
    /** Whether the consumer is subscribed and connected to every topic's broker. */
    boolean isConnected() {
        Consumer<?> subscribed = loop.consumer().orElse(null);
        return subscribed != null && subscribed.isConnected();
    }

    /**
     * How long the longest handler call now running has been running, a delivery waiting for its outcome counted
     * from its call's start; zero when none runs.
     */
    Duration longestRunningCall() {
        return loop.calls().longest();
    }

    /**
     * What tells a message the broker never dispatched from one stuck here, for a test that waited in vain (issue 41):
     * the permits, the receive thread, the calls running, and the consumer's own counts (what it received, what is
     * prefetched, the flow permits it gave the broker).
     */
    String describe() {
        StringBuilder text = new StringBuilder("subscription '" + spec.name() + "': " + loop.permits())
                .append("; receive thread ")
                .append(loop.threadState())
                .append(loop.isStopping() ? " (stopping)" : "")
                .append("; longest running call ")
                .append(longestRunningCall().toMillis())
                .append(" ms; loop failure ")
                .append(loop.loopFailure().orElse(null));
        loop.waitingFor().ifPresent(why -> text.append("; waiting for ").append(why));
        text.append("; deliveries waiting for their outputs or commit ")
                .append(loop.pendingOutputs().deliveries())
                .append("; copies left to a twin in hand ")
                .append(processing.leftToTwins())
                .append("; retries held for their delay ")
                .append(processing.heldRetries())
                .append("; held behind their key ")
                .append(heldBehindKey());
        Consumer<?> subscribed = loop.consumer().orElse(null);
        if (subscribed == null) {
            return text.append("; not subscribed").toString();
        }
        ConsumerStats stats = subscribed.getStats();
        text.append("; consumer ")
                .append(subscribed.getConsumerName())
                .append(subscribed.isConnected() ? " connected" : " not connected")
                // The client adds up its totals once per stats interval (60 s by default): they lag behind.
                .append(", received ")
                .append(stats.getTotalMsgsReceived())
                .append(" and acknowledged ")
                .append(stats.getTotalAcksSent())
                .append(" by its last stats interval, in its receiver queue ")
                .append(stats.getMsgNumInReceiverQueue());
        if (subscribed instanceof ConsumerImpl<?> single) {
            text.append(", flow permits not yet sent to the broker ").append(single.getAvailablePermits());
        }
        return text.toString();
    }

    /** Messages held in this runtime behind an earlier message of their key that waits for its retry. */
    int heldBehindKey() {
        return processing.keyHold().heldBehindKey();
    }

    /** How long the oldest key now held behind a retry has been held; zero when none is. */
    Duration oldestKeyHold() {
        return Duration.ofNanos(processing.keyHold().oldestHoldNanos());
    }

    /** Messages the client has prefetched and the driver not yet taken (the receiver queue's fill). */
    int messagesInReceiverQueue() {
        Consumer<?> subscribed = loop.consumer().orElse(null);
        if (subscribed == null) {
            return 0;
        }
        Integer queued = subscribed.getStats().getMsgNumInReceiverQueue();
        return queued == null ? 0 : queued;
    }

    /** {@code closed}, {@code open} or {@code half-open}: the outage circuit breaker's state; {@code off} when off. */
    String breakerState() {
        return processing.outage().state();
    }

    /** Why the breaker is in its state (what opened it, or what closed it); empty when it is off. */
    String breakerReason() {
        return processing.outage().reason();
    }

    /** Messages the open breaker holds unacknowledged now. */
    int heldForOutage() {
        return processing.outage().held();
    }
}
