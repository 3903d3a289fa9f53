package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A validated, immutable manifest.
 *
 * @param file the manifest file, absolute
 * @param pulsar how to reach Pulsar
 * @param http where /metrics, /livez and /readyz are served
 * @param subscriptions one entry per driver, in manifest order
 * @param locations where each path (such as {@code subscriptions[1].jar}) was written, for later problems
 */
public record Manifest(
        Path file,
        PulsarSettings pulsar,
        HttpSettings http,
        List<SubscriptionSpec> subscriptions,
        Map<String, Location> locations) {

    public Manifest {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(pulsar, "pulsar");
        Objects.requireNonNull(http, "http");
        subscriptions = List.copyOf(subscriptions);
        locations = Map.copyOf(locations);
    }

    /** Where {@code path} was written, or the top of the file when it was not written at all. */
    public Location locate(String path) {
        return locations.getOrDefault(path, new Location(file, 1, 1));
    }
}
