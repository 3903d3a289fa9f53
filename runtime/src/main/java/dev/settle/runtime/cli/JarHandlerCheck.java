package dev.settle.runtime.cli;

import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.Problem;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads each subscription's handler from its JAR, as {@code run} will, without opening it: the class is found,
 * is a {@code Handler}, has a message type, and can be constructed. Problems point at the subscription's
 * {@code handler} (or {@code jar}, when no handler is named).
 */
final class JarHandlerCheck implements HandlerCheck {
    @Override
    public List<Problem> check(Manifest manifest) {
        List<Problem> problems = new ArrayList<>();
        try (HandlerLoader loader = new HandlerLoader()) {
            for (int i = 0; i < manifest.subscriptions().size(); i++) {
                SubscriptionSpec spec = manifest.subscriptions().get(i);
                String path = "subscriptions[" + i + "]." + (spec.handler().isPresent() ? "handler" : "jar");
                try {
                    loader.load(spec.jar(), spec.handler());
                } catch (HandlerLoadException e) {
                    problems.add(new Problem(manifest.locate(path), path, e.getMessage()));
                }
            }
        }
        return problems;
    }
}
