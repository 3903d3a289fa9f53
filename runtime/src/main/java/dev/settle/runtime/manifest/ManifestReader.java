package dev.settle.runtime.manifest;

import dev.settle.runtime.manifest.ManifestKey.Level;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;

/** Turns a composed YAML document into a {@link Manifest}, or into every problem it has. */
final class ManifestReader {
    private final Path file;
    private final Path absolute;
    private final Map<String, String> environment;
    private final boolean jarsMustExist;

    /**
     * @param file the manifest as the user named it; problems print this path
     * @param environment where {@code ${...}} and {@code token: {env: ...}} are looked up
     */
    ManifestReader(Path file, Map<String, String> environment) {
        this(file, environment, true);
    }

    /** @param jarsMustExist false to take each subscription's {@code jar} as a path only, never looked for */
    ManifestReader(Path file, Map<String, String> environment, boolean jarsMustExist) {
        this.file = file;
        this.absolute = file.toAbsolutePath().normalize();
        this.environment = environment;
        this.jarsMustExist = jarsMustExist;
    }

    Manifest read(Node root) throws ManifestException {
        NodeReader reader = new NodeReader(file, environment);
        KeyReader keys = new KeyReader(reader, Level.ROOT);
        Optional<NodeReader.Mapping> found = keys.mapping(root, "");
        if (found.isEmpty()) {
            throw new ManifestException(reader.problems());
        }
        NodeReader.Mapping top = found.get();
        Path folder = absolute.getParent();
        Optional<PulsarSettings> pulsar =
                top.get("pulsar").flatMap(node -> new PulsarSettingsReader(reader, folder, environment).read(node));
        HttpSettings http = top.get("http").map(node -> http(reader, node)).orElse(HttpSettings.DEFAULT);
        StartupSettings startup =
                top.get("startup").map(node -> startup(reader, node)).orElse(StartupSettings.DEFAULT);
        ShutdownSettings shutdown =
                top.get("shutdown").map(node -> shutdown(reader, node)).orElse(ShutdownSettings.DEFAULT);
        boolean tracing = keys.boolOrDefault(top, "tracing");
        Optional<AdminSettings> admin = top.get("admin")
                .flatMap(node -> new AdminSettingsReader(reader, folder, environment)
                        // An unreadable pulsar section is reported there: no second problem about adminUrl here.
                        .read(
                                node,
                                http.port(),
                                pulsar.isEmpty() || pulsar.get().adminUrl().isPresent()));
        List<SubscriptionSpec> subscriptions = top.get("subscriptions")
                .map(node -> subscriptions(
                        reader,
                        folder,
                        node,
                        jarsMustExist,
                        pulsar.map(PulsarSettings::packageCache).orElse(PulsarSettings.DEFAULT_PACKAGE_CACHE),
                        pulsar.isEmpty() || pulsar.get().adminUrl().isPresent()))
                .orElse(List.of());
        if (reader.problemCount() > 0 || pulsar.isEmpty()) {
            throw new ManifestException(reader.problems());
        }
        return new Manifest(
                absolute,
                pulsar.get(),
                http,
                startup,
                shutdown,
                tracing,
                admin,
                subscriptions,
                reader.locations(),
                reader.environmentPaths());
    }

    private static StartupSettings startup(NodeReader reader, Node node) {
        KeyReader keys = new KeyReader(reader, Level.STARTUP);
        return new StartupSettings(keys.mapping(node, "startup")
                .map(startup -> keys.durationOrDefault(startup, "timeout"))
                .orElse(keys.key("timeout").durationDefault()));
    }

    private static ShutdownSettings shutdown(NodeReader reader, Node node) {
        KeyReader keys = new KeyReader(reader, Level.SHUTDOWN);
        return new ShutdownSettings(keys.mapping(node, "shutdown")
                .map(shutdown -> keys.durationOrDefault(shutdown, "grace"))
                .orElse(keys.key("grace").durationDefault()));
    }

    private static HttpSettings http(NodeReader reader, Node node) {
        KeyReader keys = new KeyReader(reader, Level.HTTP);
        Optional<NodeReader.Mapping> found = keys.mapping(node, "http");
        if (found.isEmpty()) {
            return HttpSettings.DEFAULT;
        }
        NodeReader.Mapping http = found.get();
        int port = keys.integerOrDefault(http, "port");
        String bindAddress = Addresses.bindAddress(reader, http, "'0.0.0.0' (every interface), '127.0.0.1' or '::'")
                .orElse(keys.key("bindAddress").textDefault());
        boolean probeDetail = keys.boolOrDefault(http, "probeDetail");
        return new HttpSettings(bindAddress, port, probeDetail);
    }

    private static List<SubscriptionSpec> subscriptions(
            NodeReader reader,
            Path folder,
            Node node,
            boolean jarsMustExist,
            Path packageCache,
            boolean canFetchPackages) {
        List<SubscriptionSpec> subscriptions = new ArrayList<>();
        Optional<List<Node>> elements = reader.sequence(node, "subscriptions");
        if (elements.isEmpty()) {
            return subscriptions;
        }
        if (elements.get().isEmpty()) {
            reader.problem(node, "subscriptions", "must list at least one subscription");
        }
        SubscriptionReader subscriptionReader =
                new SubscriptionReader(reader, folder, jarsMustExist, packageCache, canFetchPackages);
        for (int i = 0; i < elements.get().size(); i++) {
            String path = "subscriptions[" + i + "]";
            subscriptionReader.read(elements.get().get(i), path).ifPresent(subscriptions::add);
        }
        return subscriptions;
    }
}
