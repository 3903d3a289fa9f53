package dev.settle.runtime.deployment;

import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;

/**
 * What is to run: a validated manifest and, for each of its subscriptions, the handler loaded from its JAR and
 * constructed, not yet opened. {@link Preflight} makes one from a manifest file; {@code settle validate} prints
 * it, {@code settle run} starts it, and a live change is a new deployment compared with the running one.
 *
 * <p>The deployment owns the handlers' class loaders: whoever made it closes it, after whatever ran its handlers
 * has closed them.
 */
public final class Deployment implements AutoCloseable {
    private final Manifest manifest;
    private final HandlerLoader loader;
    private final Map<String, LoadedHandler> handlers;
    private final Map<String, LoadedFunction> functions;

    Deployment(
            Manifest manifest,
            HandlerLoader loader,
            Map<String, LoadedHandler> handlers,
            Map<String, LoadedFunction> functions) {
        this.manifest = manifest;
        this.loader = loader;
        this.handlers = new LinkedHashMap<>(handlers);
        this.functions = new LinkedHashMap<>(functions);
    }

    public Manifest manifest() {
        return manifest;
    }

    /** The subscriptions, in manifest order. */
    public List<SubscriptionSpec> subscriptions() {
        return manifest.subscriptions();
    }

    /**
     * The handler of a subscription, constructed and not opened.
     *
     * @throws NoSuchElementException when the manifest has no such subscription
     */
    public LoadedHandler handler(String subscription) {
        LoadedHandler handler = handlers.get(subscription);
        if (handler == null) {
            throw new NoSuchElementException("no subscription '" + subscription + "' in " + manifest.file());
        }
        return handler;
    }

    /**
     * Says that a subscription's handler is done with (closed, and swapped for other code): its class loader, the
     * subscription's own, is closed.
     */
    public void release(String subscription) {
        loader.release(handler(subscription));
    }

    /**
     * The Pulsar Function of a subscription with {@code function:}, constructed and not initialised.
     *
     * @return the function, or empty when the subscription runs a handler
     * @throws NoSuchElementException when the manifest has no such subscription
     */
    public Optional<LoadedFunction> function(String subscription) {
        if (!handlers.containsKey(subscription) && !functions.containsKey(subscription)) {
            throw new NoSuchElementException("no subscription '" + subscription + "' in " + manifest.file());
        }
        return Optional.ofNullable(functions.get(subscription));
    }

    /** Closes every class loader of the deployment's handlers. Idempotent. */
    @Override
    public void close() {
        loader.close();
    }
}
