package dev.settle.runtime.deployment;

import dev.settle.runtime.isolation.HandlerLoadException;
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
 * has closed them. Thread-safe.
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
    public synchronized LoadedHandler handler(String subscription) {
        LoadedHandler handler = handlers.get(subscription);
        if (handler == null) {
            throw new NoSuchElementException(
                    spec(subscription).handler().function()
                            ? "subscription '" + subscription + "' in " + manifest.file() + " runs a function"
                            : "the handler of subscription '" + subscription + "' in " + manifest.file()
                                    + " was released");
        }
        return handler;
    }

    /**
     * Says that a subscription's handler or function is done with (closed, swapped for other code, or never to run):
     * its class loader, the subscription's own, is closed, and the deployment lets go of it, so that a deployment kept
     * while its other code runs does not keep this code from being collected. Idempotent.
     */
    public void release(String subscription) {
        LoadedHandler handler;
        LoadedFunction function;
        synchronized (this) {
            handler = handlers.remove(subscription);
            function = functions.remove(subscription);
        }
        if (handler != null) {
            loader.release(handler);
        }
        if (function != null) {
            loader.release(function);
        }
    }

    /** Whether every handler and function of the deployment has been {@link #release released}. */
    public synchronized boolean releasedAll() {
        return handlers.isEmpty() && functions.isEmpty();
    }

    /**
     * Loads a subscription's handler or function again from its JAR, constructed and not opened, in place of the one
     * loaded before (released first): for a subscription a reload added whose code did not open, retried.
     *
     * @throws HandlerLoadException when it cannot be loaded now
     * @throws NoSuchElementException when the manifest has no such subscription
     */
    public void loadAgain(String subscription) throws HandlerLoadException {
        SubscriptionSpec spec = spec(subscription);
        release(subscription);
        if (spec.handler().function()) {
            LoadedFunction function = loader.loadFunction(
                    spec.handler().jar(), spec.handler().className().orElseThrow());
            synchronized (this) {
                functions.put(subscription, function);
            }
        } else {
            LoadedHandler handler =
                    loader.load(spec.handler().jar(), spec.handler().className());
            synchronized (this) {
                handlers.put(subscription, handler);
            }
        }
    }

    private SubscriptionSpec spec(String subscription) {
        return manifest.subscriptions().stream()
                .filter(spec -> spec.name().equals(subscription))
                .findFirst()
                .orElseThrow(() ->
                        new NoSuchElementException("no subscription '" + subscription + "' in " + manifest.file()));
    }

    /**
     * The Pulsar Function of a subscription with {@code function:}, constructed and not initialised.
     *
     * @return the function, or empty when the subscription runs a handler
     * @throws NoSuchElementException when the manifest has no such subscription, or its function was released
     */
    public synchronized Optional<LoadedFunction> function(String subscription) {
        if (!spec(subscription).handler().function()) {
            return Optional.empty();
        }
        LoadedFunction function = functions.get(subscription);
        if (function == null) {
            throw new NoSuchElementException(
                    "the function of subscription '" + subscription + "' in " + manifest.file() + " was released");
        }
        return Optional.of(function);
    }

    /** Closes every class loader of the deployment's handlers. Idempotent. */
    @Override
    public void close() {
        loader.close();
    }
}
