package dev.settle.runtime;

import dev.settle.runtime.driver.SdkPublisher;
import dev.settle.runtime.manifest.Topics;
import dev.settle.runtime.publish.Outputs;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Publisher;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a handler is told about its subscription at {@code open}, and where its publishers publish ({@code null}
 * outputs: a context that cannot publish). Made by {@link PortChain#context}, for the runtime and the test kit alike.
 */
record SubscriptionContext(
        String subscription, List<String> topics, Map<String, String> config, Outputs outputs, ClassLoader loader)
        implements HandlerContext {

    @Override
    public <T> Publisher<T> publisher(String topic, Class<T> type) {
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(type, "type");
        if (outputs == null) {
            return HandlerContext.super.publisher(topic, type);
        }
        String name = Topics.fullName(topic);
        return new SdkPublisher<>(name, type, schemaLoader(type), outputs);
    }

    /** The handler's loader, else the type's; a JDK type ({@code String}, {@code byte[]}) has none: the runtime's. */
    private ClassLoader schemaLoader(Class<?> type) {
        if (loader != null) {
            return loader;
        }
        return type.getClassLoader() != null ? type.getClassLoader() : SubscriptionContext.class.getClassLoader();
    }
}
