package dev.settle.runtime.deployment;

import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.runtime.manifest.Problem;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one check between a manifest file and a {@link Deployment}, shared by {@code validate}, {@code run}, the
 * tests and live changes, so that "validate passed" means "run will start": the manifest loads and validates, then
 * every subscription's handler is loaded from its JAR and constructed (not opened). Every problem, of the manifest
 * or of a handler, is reported at once, pointing at the manifest.
 */
public final class Preflight {
    private Preflight() {}

    /**
     * Checks a manifest and loads its handlers.
     *
     * @param file the manifest; problems print it as given
     * @param environment where {@code ${...}} and {@code token: {env: ...}} are looked up
     * @return the deployment, which the caller closes
     * @throws ManifestException with every problem, when the manifest or a handler is refused
     * @throws IOException when the manifest cannot be read at all
     */
    public static Deployment check(Path file, Map<String, String> environment) throws ManifestException, IOException {
        Manifest manifest = ManifestLoader.load(file, environment);
        HandlerLoader loader = new HandlerLoader();
        Map<String, LoadedHandler> handlers = new LinkedHashMap<>();
        List<Problem> problems = new ArrayList<>();
        List<SubscriptionSpec> subscriptions = manifest.subscriptions();
        for (int i = 0; i < subscriptions.size(); i++) {
            SubscriptionSpec spec = subscriptions.get(i);
            String path = "subscriptions[" + i + "]." + (spec.handler().className().isPresent() ? "handler" : "jar");
            try {
                handlers.put(spec.name(), loader.load(spec.handler().jar(), spec.handler().className()));
            } catch (HandlerLoadException e) {
                problems.add(new Problem(manifest.locate(path), path, e.getMessage()));
            }
        }
        if (!problems.isEmpty()) {
            loader.close();
            throw new ManifestException(problems);
        }
        return new Deployment(manifest, loader, handlers);
    }
}
