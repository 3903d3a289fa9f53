package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
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
        Optional<NodeReader.Mapping> found = reader.mapping(root, "", ManifestKeys.ROOT, ManifestKeys.ROOT_REQUIRED);
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
        boolean tracing =
                top.get("tracing").flatMap(node -> reader.bool(node, "tracing")).orElse(false);
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
        return reader.mapping(node, "startup", ManifestKeys.STARTUP, List.of())
                .flatMap(startup ->
                        startup.get("timeout").flatMap(value -> reader.duration(value, startup.path("timeout"))))
                .map(StartupSettings::new)
                .orElse(StartupSettings.DEFAULT);
    }

    private static ShutdownSettings shutdown(NodeReader reader, Node node) {
        return reader.mapping(node, "shutdown", ManifestKeys.SHUTDOWN, List.of())
                .flatMap(shutdown ->
                        shutdown.get("grace").flatMap(value -> reader.duration(value, shutdown.path("grace"))))
                .map(ShutdownSettings::new)
                .orElse(ShutdownSettings.DEFAULT);
    }

    private static HttpSettings http(NodeReader reader, Node node) {
        Optional<NodeReader.Mapping> found = reader.mapping(node, "http", ManifestKeys.HTTP, List.of());
        if (found.isEmpty()) {
            return HttpSettings.DEFAULT;
        }
        NodeReader.Mapping http = found.get();
        int port = http.get("port")
                .map(value -> {
                    OptionalInt parsed = reader.integer(value, http.path("port"), 0);
                    if (parsed.isPresent() && parsed.getAsInt() > 65535) {
                        reader.problem(
                                value,
                                http.path("port"),
                                "must be between 0 and 65535 (0 picks a free port), was '" + parsed.getAsInt() + "'");
                        return OptionalInt.empty();
                    }
                    return parsed;
                })
                .orElse(OptionalInt.empty())
                .orElse(HttpSettings.DEFAULT.port());
        String bindAddress = http.get("bindAddress")
                .flatMap(value -> reader.nonBlank(value, http.path("bindAddress"))
                        .map(String::strip)
                        .filter(text -> {
                            if (Addresses.isBindable(text)) {
                                return true;
                            }
                            reader.problem(
                                    value,
                                    http.path("bindAddress"),
                                    "must be an IP address such as '0.0.0.0' (every"
                                            + " interface), '127.0.0.1' or '::', or 'localhost', was '" + text + "'");
                            return false;
                        }))
                .orElse(HttpSettings.DEFAULT.bindAddress());
        boolean probeDetail = http.get("probeDetail")
                .flatMap(value -> reader.bool(value, http.path("probeDetail")))
                .orElse(true);
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
