package dev.settle.runtime.manifest;

import dev.settle.runtime.manifest.ManifestKey.Level;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.yaml.snakeyaml.nodes.Node;

/** Reads {@code admin:}. The token is read here, once, into a {@link Secret}; no message ever quotes it. */
final class AdminSettingsReader {

    private final NodeReader reader;
    private final Path folder;
    private final Map<String, String> environment;

    AdminSettingsReader(NodeReader reader, Path folder, Map<String, String> environment) {
        this.reader = reader;
        this.folder = folder;
        this.environment = environment;
    }

    /** The settings, or empty when something in them is wrong (the problems are recorded). */
    Optional<AdminSettings> read(Node node, int httpPort, boolean hasAdminUrl) {
        KeyReader keys = new KeyReader(reader, Level.ADMIN);
        Optional<NodeReader.Mapping> found = keys.mapping(node, "admin");
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping admin = found.get();
        int before = reader.problemCount();
        int port = admin.has("port")
                ? port(keys, admin, httpPort).orElse(-1)
                : keys.key("port").intDefault();
        String bindAddress = Addresses.bindAddress(
                        reader, admin, "'127.0.0.1' (the default, this host only) or '0.0.0.0' (every interface)")
                .orElse(keys.key("bindAddress").textDefault());
        Optional<Secret> token = admin.get("token")
                .flatMap(value -> token(value, admin.path("token"))
                        .filter(secret -> longEnough(secret, value, admin.path("token"))));
        Optional<Path> dataDir = admin.get("dataDir").flatMap(value -> dataDir(value, admin.path("dataDir")));
        long maxJarSize = admin.has("maxJarSize")
                ? keys.size(admin, "maxJarSize").orElse(-1L)
                : AdminSettings.DEFAULT_MAX_JAR_SIZE;
        Optional<Duration> check = admin.has("retiredLoaderCheck")
                ? keys.duration(admin, "retiredLoaderCheck")
                : Optional.of(keys.key("retiredLoaderCheck").durationDefault());
        AdminSettings.CodeStore codeStore = admin.get("codeStore")
                .flatMap(value -> codeStore(value, admin.path("codeStore"), hasAdminUrl))
                .orElse(AdminSettings.CodeStore.DISK);
        Optional<String> codeNamespace = admin.get("codeNamespace")
                .flatMap(value -> codeNamespace(value, admin.path("codeNamespace"), codeStore));
        if (codeStore == AdminSettings.CodeStore.PULSAR && !admin.has("codeNamespace")) {
            reader.problem(
                    node,
                    admin.path("codeNamespace"),
                    "is required with codeStore: pulsar; name the tenant/namespace the packages and the generation"
                            + " records are kept in, such as 'public/default'");
        }
        if (reader.problemCount() != before || token.isEmpty() || dataDir.isEmpty() || check.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new AdminSettings(
                bindAddress, port, token.get(), dataDir.get(), maxJarSize, check.get(), codeStore, codeNamespace));
    }

    private Optional<AdminSettings.CodeStore> codeStore(Node value, String path, boolean hasAdminUrl) {
        return reader.nonBlank(value, path).map(String::strip).flatMap(text -> {
            if (text.equals("disk")) {
                return Optional.of(AdminSettings.CodeStore.DISK);
            }
            if (!text.equals("pulsar")) {
                reader.problem(
                        value,
                        path,
                        "must be 'disk' (this pod's dataDir, for one replica; the default) or 'pulsar' (packages and a"
                                + " record every replica reads), was '" + text + "'");
                return Optional.empty();
            }
            if (!hasAdminUrl) {
                reader.problem(
                        value,
                        path,
                        "is 'pulsar', which keeps code as Pulsar packages: set pulsar.adminUrl (the web service,"
                                + " such as http://pulsar-broker:8080), or use codeStore: disk");
                return Optional.empty();
            }
            return Optional.of(AdminSettings.CodeStore.PULSAR);
        });
    }

    private Optional<String> codeNamespace(Node value, String path, AdminSettings.CodeStore codeStore) {
        return reader.nonBlank(value, path).map(String::strip).flatMap(text -> {
            if (codeStore != AdminSettings.CodeStore.PULSAR) {
                reader.problem(value, path, "is only read with codeStore: pulsar; remove it, or set codeStore: pulsar");
                return Optional.empty();
            }
            if (!text.matches("[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")) {
                reader.problem(
                        value,
                        path,
                        "must be tenant/namespace, each letters, digits, '.', '_' or '-', such as 'public/default',"
                                + " was '" + text + "'");
                return Optional.empty();
            }
            return Optional.of(text);
        });
    }

    private OptionalInt port(KeyReader keys, NodeReader.Mapping admin, int httpPort) {
        Node value = admin.get("port").orElseThrow();
        String path = admin.path("port");
        OptionalInt parsed = keys.integer(admin, "port");
        if (parsed.isPresent() && parsed.getAsInt() != 0 && parsed.getAsInt() == httpPort) {
            reader.problem(
                    value,
                    path,
                    "is http.port too, was '" + httpPort + "'; the admin API needs a port of its own, so that"
                            + " /metrics can be reachable where code upload is not");
            return OptionalInt.empty();
        }
        return parsed;
    }

    /** Never quotes the token, nor says how it starts: only how long it is, or how many different characters. */
    private boolean longEnough(Secret token, Node node, String path) {
        Optional<String> weakness = AdminSettings.tokenWeakness(token.reveal());
        weakness.ifPresent(why -> reader.problem(node, path, why));
        return weakness.isEmpty();
    }

    private Optional<Secret> token(Node node, String path) {
        return new TokenSource(reader, environment)
                .read(Level.ADMIN_TOKEN, node, path, "the admin token", token -> token, this::tokenFile);
    }

    private Optional<Secret> tokenFile(Node fileNode, String filePath) {
        return reader.nonBlank(fileNode, filePath).flatMap(name -> {
            Path file = folder.resolve(name.strip()).normalize();
            try {
                String value = Files.readString(file, StandardCharsets.UTF_8).strip();
                if (value.isEmpty()) {
                    reader.problem(fileNode, filePath, "the token file '" + file + "' is empty");
                    return Optional.empty();
                }
                return Optional.of(new Secret(value));
            } catch (IOException e) {
                reader.problem(
                        fileNode,
                        filePath,
                        "cannot read the token file '" + file + "' ("
                                + e.getClass().getSimpleName()
                                + "); relative paths are relative to the manifest's folder");
                return Optional.empty();
            }
        });
    }

    private Optional<Path> dataDir(Node node, String path) {
        return reader.nonBlank(node, path).flatMap(name -> {
            Path dir = folder.resolve(name.strip()).normalize();
            // Uploaded generations in it run at start without another check: it must be this user's alone.
            Optional<String> problem = OwnedFolder.problem(dir, "the path");
            problem.ifPresent(text -> reader.problem(node, path, text));
            return problem.isEmpty() ? Optional.of(dir) : Optional.empty();
        });
    }
}
