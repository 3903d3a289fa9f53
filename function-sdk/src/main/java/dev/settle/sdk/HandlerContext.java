package dev.settle.sdk;

import java.util.List;
import java.util.Map;

/**
 * What a handler is told about the subscription it serves, at {@link Handler#open(HandlerContext)}.
 *
 * @since 0.1
 */
public interface HandlerContext {

    /**
     * The Pulsar subscription name from the manifest.
     *
     * @return the subscription name, never {@code null}
     * @since 0.1
     */
    String subscription();

    /**
     * The topics the subscription consumes, as the manifest lists them (empty with a topic pattern).
     *
     * @return an unmodifiable list, never {@code null}
     * @since 0.1
     */
    List<String> topics();

    /**
     * The subscription's {@code config} map from the manifest, after environment substitution.
     *
     * @return an unmodifiable map, empty when the manifest has none, never {@code null}
     * @since 0.1
     */
    Map<String, String> config();

    /**
     * A publisher of {@code type} values to {@code topic}, whose sends hold back the acknowledgement of the delivery
     * they are made for until they are durable ({@link Publisher}). Call it in {@link Handler#open(HandlerContext)};
     * publishers are cheap to keep and the runtime closes them.
     *
     * @param topic the topic, such as {@code persistent://public/default/orders-audit}; not {@code null}
     * @param type {@code String.class}, {@code byte[].class}, or a class to publish as JSON; not {@code null}
     * @param <T> the type of the values
     * @return a publisher, never {@code null}
     * @throws NullPointerException when {@code topic} or {@code type} is {@code null}
     * @throws IllegalArgumentException when {@code topic} is not a valid Pulsar topic name
     * @throws UnsupportedOperationException from a context that cannot publish (the default, for contexts made
     *     outside the runtime)
     * @since 0.2
     */
    default <T> Publisher<T> publisher(String topic, Class<T> type) {
        throw new UnsupportedOperationException("this HandlerContext cannot publish; the Settle runtime's can");
    }
}
