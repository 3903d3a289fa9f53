package dev.settle.runtime;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.live.JarDigest;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.SubscriptionSpec;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a manifest reload needs to know of the running Settle: the manifest it runs, the sha256 of each JAR as it
 * was loaded, the deployments reloads made, and the counter
 * {@code settle_manifest_reloads_total{result}}. Guarded by the {@link Settle}'s monitor.
 */
final class Reloads {
    /** The deployments reloads made: each owns the class loaders of the handlers it started; closed at the end. */
    final List<Deployment> deployments = new CopyOnWriteArrayList<>();

    private final Counter reloads;
    Manifest manifest;
    Map<String, String> sha256 = Map.of();

    Reloads(PrometheusRegistry registry) {
        reloads = Counter.builder()
                .name("settle_manifest_reloads")
                .help("Manifest reloads (the file changed, or SIGHUP), by result: applied, unchanged, refused.")
                .labelNames("result")
                .withoutExemplars()
                .register(registry);
        for (String result : List.of("applied", "unchanged", "refused")) {
            reloads.labelValues(result);
        }
    }

    void started(Deployment deployment) {
        manifest = deployment.manifest();
        sha256 = digests(manifest);
    }

    void count(String result) {
        reloads.labelValues(result).inc();
    }

    /** Each subscription's JAR sha256 now; a JAR that cannot be read gets a value no JAR has, so it differs. */
    static Map<String, String> digests(Manifest manifest) {
        Map<String, String> digests = new LinkedHashMap<>();
        for (SubscriptionSpec spec : manifest.subscriptions()) {
            try {
                digests.put(spec.name(), JarDigest.of(spec.handler().jar()));
            } catch (IOException e) {
                digests.put(spec.name(), "unreadable: " + e);
            }
        }
        return digests;
    }
}
