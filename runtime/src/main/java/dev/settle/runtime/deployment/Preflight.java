package dev.settle.runtime.deployment;

import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.runtime.manifest.Problem;
import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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
        return check(file, environment, new HandlerLoader());
    }

    /**
     * As {@link #check(Path, Map)}, loading the handlers with {@code loader}, which the deployment then owns (and
     * which is closed here when the check fails).
     */
    public static Deployment check(Path file, Map<String, String> environment, HandlerLoader loader)
            throws ManifestException, IOException {
        Manifest manifest;
        try {
            manifest = ManifestLoader.load(file, environment);
        } catch (ManifestException | IOException | RuntimeException e) {
            loader.close();
            throw e;
        }
        Map<String, LoadedHandler> handlers = new LinkedHashMap<>();
        Map<String, LoadedFunction> functions = new LinkedHashMap<>();
        List<Problem> problems = new ArrayList<>();
        List<SubscriptionSpec> subscriptions = manifest.subscriptions();
        for (int i = 0; i < subscriptions.size(); i++) {
            SubscriptionSpec spec = subscriptions.get(i);
            if (spec.handler().fromPackage().isPresent()) {
                // Fetched (or found in the cache and verified) before it is loaded, like a JAR on disk.
                try {
                    PackageFetch.fetch(
                            manifest.pulsar(),
                            spec.handler().fromPackage().get(),
                            spec.handler().jar());
                } catch (IOException e) {
                    String path = "subscriptions[" + i + "].jar";
                    problems.add(new Problem(manifest.locate(path), path, e.getMessage()));
                    continue;
                }
            }
            if (spec.handler().function()) {
                String path = "subscriptions[" + i + "].function";
                try {
                    LoadedFunction function = loader.loadFunction(
                            spec.handler().jar(), spec.handler().className().get());
                    functions.put(spec.name(), function);
                    problems.addAll(FunctionChecks.of(manifest, i, spec, function));
                } catch (HandlerLoadException e) {
                    problems.add(new Problem(manifest.locate(path), path, e.getMessage()));
                }
                continue;
            }
            String path =
                    "subscriptions[" + i + "]." + (spec.handler().className().isPresent() ? "handler" : "jar");
            try {
                LoadedHandler handler =
                        loader.load(spec.handler().jar(), spec.handler().className());
                handlers.put(spec.name(), handler);
                schemaThatDoesNotFit(manifest, i, spec, handler).ifPresent(problems::add);
                problems.addAll(FunctionChecks.exceptionTypes(manifest, i, spec, handler.classLoader()));
            } catch (HandlerLoadException e) {
                problems.add(new Problem(manifest.locate(path), path, e.getMessage()));
            }
        }
        if (!problems.isEmpty()) {
            loader.close();
            throw new ManifestException(problems);
        }
        return new Deployment(manifest, loader, handlers, functions);
    }

    /** A declared {@code schema} the handler's type cannot take would fail every message: refused here instead. */
    private static Optional<Problem> schemaThatDoesNotFit(
            Manifest manifest, int index, SubscriptionSpec spec, LoadedHandler handler) {
        String path = "subscriptions[" + index + "].schema";
        return schemaMisfit(spec, handler).map(message -> new Problem(manifest.locate(path), path, message));
    }

    /**
     * Why the subscription's declared {@code schema} cannot take the handler's message type, if it cannot; the same
     * check for a handler named by the manifest and for one uploaded while running.
     */
    public static Optional<String> schemaMisfit(SubscriptionSpec spec, LoadedHandler handler) {
        Class<?> type = handler.messageType();
        return spec.handler()
                .schema()
                .filter(kind -> !kind.fits(type))
                .map(kind -> "'" + kind.manifestName()
                        + "' does not fit handler "
                        + handler.className() + ", which takes " + type.getTypeName()
                        + "; the schemas that fit are "
                        + String.join(
                                ", ",
                                SchemaKind.fitting(type).stream()
                                        .map(SchemaKind::manifestName)
                                        .toList())
                        + ", or leave schema out to take the handler's");
    }
}
