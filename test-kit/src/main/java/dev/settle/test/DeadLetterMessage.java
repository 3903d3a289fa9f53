package dev.settle.test;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/**
 * A message the client produced to a dead-letter topic: the original's payload, key and properties, plus the
 * properties the Pulsar client adds ({@link #REAL_TOPIC}, {@link #REAL_SUBSCRIPTION}, {@link #ORIGIN_MESSAGE_ID}, and the
 * origin again as {@link #ORIGIN_MESSAGE_ID_AS_SPELT_BY_THE_CLIENT}).
 *
 * @param topic the dead-letter topic
 * @param messageId its id on the dead-letter topic
 * @param data the payload, as published
 * @param key the key, if the original had one
 * @param properties the original's properties and the client's three
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API").
 */
public record DeadLetterMessage(
        String topic, String messageId, byte[] data, Optional<String> key, Map<String, String> properties) {
    /** The topic the message was consumed from. */
    public static final String REAL_TOPIC = "REAL_TOPIC";
    /** The subscription that dead-lettered it. */
    public static final String REAL_SUBSCRIPTION = "REAL_SUBSCRIPTION";
    /** The message's id on the topic it was consumed from. */
    public static final String ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID";
    /**
     * The same id again, under the name of the client's {@code RetryMessageUtil.SYSTEM_PROPERTY_ORIGIN_MESSAGE_ID}
     * (spelt so in Pulsar 4.2.4; the fidelity suite found it on the broker's dead letters).
     */
    public static final String ORIGIN_MESSAGE_ID_AS_SPELT_BY_THE_CLIENT = "ORIGIN_MESSAGE_IDY_TIME";

    public DeadLetterMessage {
        data = data.clone();
        properties = Map.copyOf(properties);
    }

    @Override
    public byte[] data() {
        return data.clone();
    }

    /** The payload as UTF-8 text. */
    public String text() {
        return new String(data, StandardCharsets.UTF_8);
    }

    /** Where the message came from: {@code properties().get(ORIGIN_MESSAGE_ID)}. */
    public String originMessageId() {
        return properties.get(ORIGIN_MESSAGE_ID);
    }
}
