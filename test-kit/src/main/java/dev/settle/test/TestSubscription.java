package dev.settle.test;

import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.List;

/**
 * One subscription of a {@link SettleTestDriver}: send to it, and see what its handler and consumer did.
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API").
 */
public final class TestSubscription {
    private final SettleTestDriver owner;
    private final SimulatedSubscription simulated;
    /** Null for a handler's subscription. */
    private final FunctionRecording function;

    TestSubscription(SettleTestDriver owner, SimulatedSubscription simulated, FunctionRecording function) {
        this.owner = owner;
        this.simulated = simulated;
        this.function = function;
    }

    /** What the subscription's function served and recorded: its log lines, user config, outputs and metrics. */
    public FunctionRecording function() {
        if (function == null) {
            throw new IllegalStateException(this + " runs a handler, not a function");
        }
        return function;
    }

    /** What the subscription's handler or function published, in order. */
    public List<Published> published() {
        return owner.outputsOf(name());
    }

    /** The subscription's settings, as validated. */
    public SubscriptionSpec spec() {
        return simulated.spec();
    }

    public String name() {
        return simulated.spec().name();
    }

    /**
     * Publishes {@code value} to the subscription's first topic and returns once the handler has run on it, and
     * on whatever came back without the clock moving.
     *
     * @param value a {@code String} (UTF-8) for a {@code Handler<String>}; an object of the handler's class,
     *     encoded with the subscription's schema; or {@code byte[]}, published as it is (for a payload the handler
     *     cannot decode, say)
     * @return the message's id, as {@code Delivery.messageId()} will show it
     */
    public String send(Object value) {
        return message(value).send();
    }

    /** A message to give a key, properties, an event time or another topic before it is sent. */
    public TestMessage message(Object value) {
        List<String> topics = simulated.spec().topics().names();
        return new TestMessage(owner, this, topics.isEmpty() ? null : TestMessage.qualified(topics.get(0)), value);
    }

    /** Every delivery to the handler, in the order the handler finished with them. */
    public List<Delivered> deliveries() {
        return simulated.deliveries();
    }

    /** The deliveries of one message, by its id: its attempts in order. */
    public List<Delivered> deliveriesOf(String messageId) {
        return simulated.deliveries().stream()
                .filter(delivery -> delivery.messageId().equals(messageId))
                .toList();
    }

    /** The outcomes in the order the handler finished with them. */
    public List<Settled> outcomes() {
        return simulated.deliveries().stream().map(Delivered::outcome).toList();
    }

    /** Every call on the consumer (and what the client did by itself: ack timeouts, dead letters), in order. */
    public List<ConsumerCall> consumerCalls() {
        return simulated.calls();
    }

    /** What the client produced to the dead-letter topic for this subscription, in order. */
    public List<DeadLetterMessage> deadLetters() {
        return simulated.deadLetters();
    }

    /** Messages the broker still holds for the subscription: not acknowledged and not dead-lettered. */
    public int unacknowledged() {
        return simulated.unacknowledged();
    }

    /** {@code settle_outcomes_total} of this subscription for {@code outcome}. */
    public long outcomeCount(Settled outcome) {
        return (long) owner.metric("settle_outcomes_total", "subscription", name(), "outcome", outcome.label());
    }

    /**
     * The outage circuit breaker's state, run on the kit's clock: {@code closed}, {@code open}, {@code half-open}, or
     * {@code off} ({@code breaker: {enabled: false}}).
     */
    public String breakerState() {
        return simulated.breakerState();
    }

    /** Why the breaker is in its state, as the runtime logs it; empty when it is off. */
    public String breakerReason() {
        return simulated.breakerReason();
    }

    /** Messages the open breaker holds, unacknowledged, spending no attempts. */
    public int heldForOutage() {
        return simulated.heldForOutage();
    }

    SimulatedSubscription simulated() {
        return simulated;
    }

    void stop() {
        simulated.close();
    }

    @Override
    public String toString() {
        return simulated.toString();
    }
}
