package dev.settle.test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * A message a handler (through {@code HandlerContext.publisher}) or a function (its return value, a
 * {@code context.publish} or {@code newOutputMessage}) published while it was handled, as it was stored.
 *
 * @param subscription whose handler or function published it
 * @param topic where it went, fully qualified
 * @param messageId its id on that topic
 * @param value the value as given to the publisher
 * @param data the payload as the value's schema encoded it
 * @param key its key, if it had one
 * @param properties its properties
 * @param eventTime its event time, if one was set
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API").
 */
public record Published(
        String subscription,
        String topic,
        String messageId,
        Object value,
        byte[] data,
        Optional<String> key,
        Map<String, String> properties,
        Optional<Instant> eventTime) {

    /** The payload as UTF-8 text. */
    public String text() {
        return new String(data, StandardCharsets.UTF_8);
    }
}
