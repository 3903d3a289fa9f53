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
}
