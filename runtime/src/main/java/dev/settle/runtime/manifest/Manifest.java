package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A validated, immutable manifest.
 *
 * @param file the manifest file, absolute
 * @param pulsar how to reach Pulsar
 * @param http where /metrics, /livez and /readyz are served
 * @param startup how long the runtime may take to start
 * @param shutdown how the runtime stops
 * @param tracing whether each handling is traced with OpenTelemetry (configured by the standard {@code OTEL_*}
 *     variables); off by default
 * @param admin the admin API that takes handler JARs while running; empty (the default) when it is off
 * @param subscriptions one entry per driver, in manifest order
 * @param locations where each path (such as {@code subscriptions[1].jar}) was written, for later problems
 * @param environmentPaths the paths (such as {@code subscriptions[0].config.apiKey}) whose value came, wholly or
 *     in part, from a {@code ${...}} substitution; whoever echoes the manifest prints these as {@code [REDACTED]}
 *     where they may be secrets
 */
public record Manifest(
        Path file,
        PulsarSettings pulsar,
        HttpSettings http,
        StartupSettings startup,
        ShutdownSettings shutdown,
        boolean tracing,
        Optional<AdminSettings> admin,
        List<SubscriptionSpec> subscriptions,
        Map<String, Location> locations,
        Set<String> environmentPaths) {

    public Manifest {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(pulsar, "pulsar");
        Objects.requireNonNull(http, "http");
        Objects.requireNonNull(startup, "startup");
        Objects.requireNonNull(shutdown, "shutdown");
        Objects.requireNonNull(admin, "admin");
        subscriptions = List.copyOf(subscriptions);
        locations = Map.copyOf(locations);
        environmentPaths = Set.copyOf(environmentPaths);
    }

    /** Where {@code path} was written, or the top of the file when it was not written at all. */
    public Location locate(String path) {
        return locations.getOrDefault(path, new Location(file, 1, 1));
    }

    /** Whether the value at {@code path} came, wholly or in part, from the environment. */
    public boolean fromEnvironment(String path) {
        return environmentPaths.contains(path);
    }
}
