package dev.settle.runtime.cli;

import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.Problem;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Loads each subscription's handler from its JAR, as {@code run} will, without opening it: the class is found,
 * is a {@code Handler}, has a message type, and can be constructed. Problems point at the subscription's
 * {@code handler} (or {@code jar}, when no handler is named).
 */
final class JarHandlerCheck implements HandlerCheck {
    private final Map<String, HandlerFacts> found = new HashMap<>();

    @Override
    public List<Problem> check(Manifest manifest) {
        List<Problem> problems = new ArrayList<>();
        try (HandlerLoader loader = new HandlerLoader()) {
            for (int i = 0; i < manifest.subscriptions().size(); i++) {
                SubscriptionSpec spec = manifest.subscriptions().get(i);
                String path = "subscriptions[" + i + "]." + (spec.handler().isPresent() ? "handler" : "jar");
                try {
                    LoadedHandler handler = loader.load(spec.jar(), spec.handler());
                    found.put(spec.name(),
                            new HandlerFacts(handler.className(), handler.messageType(), handler.version()));
                } catch (HandlerLoadException e) {
                    problems.add(new Problem(manifest.locate(path), path, e.getMessage()));
                }
            }
        }
        return problems;
    }

    @Override
    public Optional<HandlerFacts> facts(String subscription) {
        return Optional.ofNullable(found.get(subscription));
    }
}
