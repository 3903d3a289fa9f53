package dev.settle.test;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A message being put together for {@link TestSubscription#message}; {@link #send()} publishes it.
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API").
 */
public final class TestMessage {
    private final SettleTestDriver owner;
    private final TestSubscription subscription;
    private final Object value;
    private String topic;
    private String key;
    private final Map<String, String> properties = new LinkedHashMap<>();
    private long eventTime;

    TestMessage(SettleTestDriver owner, TestSubscription subscription, String topic, Object value) {
        this.owner = owner;
        this.subscription = subscription;
        this.topic = topic;
        this.value = value;
    }

    /** The message key: messages of one key are handled in order, also with {@code concurrency} above 1. */
    public TestMessage key(String value) {
        key = Objects.requireNonNull(value, "key");
        return this;
    }

    public TestMessage property(String name, String value) {
        properties.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
        return this;
    }

    public TestMessage properties(Map<String, String> values) {
        values.forEach(this::property);
        return this;
    }

    /** The producer's event time. */
    public TestMessage eventTime(Instant time) {
        eventTime = time.toEpochMilli();
        return this;
    }

    /**
     * Another of the subscription's topics (or, with a pattern, a topic it matches). A short name such as
     * {@code orders} means {@code persistent://public/default/orders}, as in the manifest.
     */
    public TestMessage topic(String name) {
        topic = qualified(name);
        return this;
    }

    /**
     * Publishes the message (every subscription consuming its topic gets it) and returns once the handler has
     * run on it, and on whatever came back without the clock moving.
     *
     * @return the message's id, as {@code Delivery.messageId()} shows it
     */
    public String send() {
        String id = publish();
        owner.pump();
        return id;
    }

    /**
     * Publishes the message without handling it yet: it waits, with whatever else was published so, until the next
     * {@code send} or {@link SettleTestDriver#advance}. To hand several messages over at once, so that
     * {@code concurrency} above 1 has something to run in parallel.
     *
     * @return the message's id, as {@code Delivery.messageId()} shows it
     */
    public String publish() {
        if (topic == null) {
            throw new IllegalStateException(
                    subscription + " consumes a topic pattern: say which topic with topic(name)");
        }
        if (!subscription.simulated().consumes(topic)) {
            throw new IllegalArgumentException(subscription + " does not consume " + topic + "; it consumes "
                    + subscription.spec().topics());
        }
        byte[] data = Payloads.encode(subscription.simulated().readerSchema(), value);
        return owner.publish(
                        topic,
                        data,
                        key,
                        properties,
                        eventTime,
                        subscription.simulated().readerSchema())
                .getMessageId()
                .toString();
    }

    /** {@code orders} as {@code persistent://public/default/orders}, {@code a/b/orders} as {@code persistent://a/b/orders}. */
    static String qualified(String topic) {
        if (topic.contains("://")) {
            return topic;
        }
        String[] parts = topic.split("/");
        return parts.length == 3 ? "persistent://" + topic : "persistent://public/default/" + topic;
    }
}
