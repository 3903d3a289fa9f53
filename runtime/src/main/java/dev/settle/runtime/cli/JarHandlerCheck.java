package dev.settle.runtime.cli;

import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.Problem;
import dev.settle.runtime.manifest.SchemaKind;
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
    private final HandlerLoader loader;
    private final Map<String, LoadedHandler> loaded = new HashMap<>();

    JarHandlerCheck() {
        this(new HandlerLoader());
    }

    /** With a loader of a shorter load deadline: tests. */
    JarHandlerCheck(HandlerLoader loader) {
        this.loader = loader;
    }

    @Override
    public List<Problem> check(Manifest manifest) {
        List<Problem> problems = new ArrayList<>();
        for (int i = 0; i < manifest.subscriptions().size(); i++) {
            SubscriptionSpec spec = manifest.subscriptions().get(i);
            String path = "subscriptions[" + i + "]." + (spec.handler().isPresent() ? "handler" : "jar");
            try {
                LoadedHandler handler = loader.load(spec.jar(), spec.handler());
                loaded.put(spec.name(), handler);
                schemaThatDoesNotFit(manifest, i, spec, handler).ifPresent(problems::add);
            } catch (HandlerLoadException e) {
                problems.add(new Problem(manifest.locate(path), path, e.getMessage()));
            }
        }
        return problems;
    }

    private static Optional<Problem> schemaThatDoesNotFit(Manifest manifest, int index, SubscriptionSpec spec,
            LoadedHandler handler) {
        Class<?> type = handler.messageType();
        return spec.schema().filter(kind -> !kind.fits(type)).map(kind -> {
            String path = "subscriptions[" + index + "].schema";
            return new Problem(manifest.locate(path), path, "'" + kind.manifestName() + "' does not fit handler "
                    + handler.className() + ", which takes " + type.getTypeName() + "; the schemas that fit are "
                    + String.join(", ", SchemaKind.fitting(type).stream().map(SchemaKind::manifestName).toList())
                    + ", or leave schema out to take the handler's");
        });
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
