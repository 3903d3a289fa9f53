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
 * Loads each subscription's handler from its JAR, as {@code run} does, without opening it: the class is found,
 * is a {@code Handler}, has a message type, and can be constructed. Problems point at the subscription's
 * {@code handler} (or {@code jar}, when no handler is named). {@code run} then starts with the very handlers this
 * check constructed ({@link #loader()}, {@link #loaded()}), so a constructor runs once; {@code validate} closes
 * the check.
 */
final class JarHandlerCheck implements HandlerCheck, AutoCloseable {
    private final HandlerLoader loader = new HandlerLoader();
    private final Map<String, LoadedHandler> loaded = new HashMap<>();

    @Override
    public List<Problem> check(Manifest manifest) {
        List<Problem> problems = new ArrayList<>();
        for (int i = 0; i < manifest.subscriptions().size(); i++) {
            SubscriptionSpec spec = manifest.subscriptions().get(i);
            String path = "subscriptions[" + i + "]." + (spec.handler().isPresent() ? "handler" : "jar");
            try {
                loaded.put(spec.name(), loader.load(spec.jar(), spec.handler()));
            } catch (HandlerLoadException e) {
                problems.add(new Problem(manifest.locate(path), path, e.getMessage()));
            }
        }
        return problems;
    }

    @Override
    public Optional<HandlerFacts> facts(String subscription) {
        return Optional.ofNullable(loaded.get(subscription))
                .map(handler -> new HandlerFacts(handler.className(), handler.messageType(), handler.version()));
    }

    /** The loader of every handler checked; whoever runs them closes it. */
    HandlerLoader loader() {
        return loader;
    }

    /** The handlers checked, by subscription name, constructed and not opened. */
    Map<String, LoadedHandler> loaded() {
        return Map.copyOf(loaded);
    }

    @Override
    public void close() {
        loader.close();
    }
}
