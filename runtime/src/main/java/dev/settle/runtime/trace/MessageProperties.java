package dev.settle.runtime.trace;

import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.Map;

/** Message properties as the propagator reads and writes them: W3C {@code traceparent} and {@code tracestate}. */
enum MessageProperties implements TextMapGetter<Map<String, String>>, TextMapSetter<Map<String, String>> {
    INSTANCE;

    @Override
    public Iterable<String> keys(Map<String, String> properties) {
        return properties.keySet();
    }

    @Override
    public String get(Map<String, String> properties, String key) {
        return properties == null ? null : properties.get(key);
    }

    @Override
    public void set(Map<String, String> properties, String key, String value) {
        if (properties != null) {
            properties.put(key, value);
        }
    }
}
