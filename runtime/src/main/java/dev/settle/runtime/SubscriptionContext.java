package dev.settle.runtime;

import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.HandlerContext;
import java.util.List;
import java.util.Map;

/** What a handler is told about its subscription at {@code open} (public for the test kit, which tells it the same). */
public record SubscriptionContext(String subscription, List<String> topics, Map<String, String> config)
        implements HandlerContext {
    public static SubscriptionContext of(SubscriptionSpec spec) {
        return new SubscriptionContext(spec.name(), spec.topics().names(), spec.config());
    }
}
