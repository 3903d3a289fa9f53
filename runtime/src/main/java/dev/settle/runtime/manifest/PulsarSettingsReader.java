package dev.settle.runtime.manifest;

import dev.settle.runtime.manifest.ManifestKey.Level;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Reads {@code pulsar:}: the service URL, authentication and TLS. Secrets are read here, once, into
 * {@link Secret}s, and no problem message ever quotes one.
 */
final class PulsarSettingsReader {
    private final NodeReader reader;
    private final Path folder;
    private final Map<String, String> environment;

    PulsarSettingsReader(NodeReader reader, Path folder, Map<String, String> environment) {
        this.reader = reader;
        this.folder = folder;
        this.environment = environment;
    }

    /** The settings, or empty when something in them is wrong (the problems are recorded). */
    Optional<PulsarSettings> read(Node node) {
        KeyReader keys = new KeyReader(reader, Level.PULSAR);
        Optional<NodeReader.Mapping> found = keys.mapping(node, "pulsar");
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping pulsar = found.get();
        int before = reader.problemCount();
        Optional<String> serviceUrl =
                pulsar.get("serviceUrl").flatMap(url -> serviceUrl(url, pulsar.path("serviceUrl")));
        Optional<PulsarSettings.Authentication> authentication = pulsar.get("authentication")
                .flatMap(auth -> authentication(auth, pulsar.path("authentication"), serviceUrl));
        PulsarSettings.Tls tls =
                pulsar.get("tls").map(value -> tls(value, pulsar.path("tls"))).orElse(PulsarSettings.Tls.defaults());
        if (pulsar.has("tls") && serviceUrl.isPresent() && !serviceUrl.get().startsWith("pulsar+ssl://")) {
            reader.problem(
                    pulsar.get("tls").get(),
                    pulsar.path("tls"),
                    "is set, but serviceUrl '" + serviceUrl.get()
                            + "' does not use TLS; use a pulsar+ssl:// URL, or remove tls");
        }
        Optional<String> adminUrl = pulsar.get("adminUrl").flatMap(url -> adminUrl(url, pulsar.path("adminUrl")));
        Path packageCache = pulsar.get("packageCache")
                .flatMap(value -> reader.nonBlank(value, pulsar.path("packageCache"))
                        .map(text -> folder.resolve(text.strip()).normalize())
                        .filter(cache -> owned(cache, value, pulsar.path("packageCache"))))
                .orElse(PulsarSettings.DEFAULT_PACKAGE_CACHE);
        long packageMaxSize = pulsar.has("packageMaxSize")
                ? keys.size(pulsar, "packageMaxSize").orElse(-1L)
                : PulsarSettings.DEFAULT_PACKAGE_MAX_SIZE;
        Duration packageTimeout = keys.durationOrDefault(pulsar, "packageTimeout");
        boolean allowHttp = keys.boolOrDefault(pulsar, "allowHttpAdminUrl");
        if (adminUrl.isPresent() && pulsar.has("authentication") && !allowHttp) {
            cleartextToken(adminUrl.get(), pulsar.get("adminUrl").get(), pulsar.path("adminUrl"));
        }
        if (reader.problemCount() != before || serviceUrl.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new PulsarSettings(
                serviceUrl.get(), authentication, tls, adminUrl, packageCache, packageMaxSize, packageTimeout));
    }

    /**
     * A package is fetched with the manifest's credentials: over http:// to another host they cross the network in
     * clear. Loopback is exempt (a sidecar, a port-forward); anything else needs allowHttpAdminUrl written out.
     */
    private void cleartextToken(String url, Node node, String path) {
        if (!url.startsWith("http://")) {
            return;
        }
        String host = URI.create(url).getHost();
        if (host != null && Addresses.isLoopback(host)) {
            return;
        }
        reader.problem(
                node,
                path,
                "is http:// to '" + host + "', which would send pulsar.authentication's credentials in clear; use"
                        + " https://, or write pulsar.allowHttpAdminUrl: true if the network between them is trusted");
    }

    private boolean owned(Path cache, Node node, String path) {
        Optional<String> problem = OwnedFolder.problem(cache, "the path");
        problem.ifPresent(text -> reader.problem(node, path, text));
        return problem.isEmpty();
    }

    /** The web service URL packages are fetched from: http:// or https://, a host, nothing after the port. */
    private Optional<String> adminUrl(Node node, String path) {
        return reader.nonBlank(node, path).map(String::strip).flatMap(text -> {
            if (!text.matches("https?://[A-Za-z0-9.\\[\\]:-]+/?")) {
                reader.problem(
                        node,
                        path,
                        "must be the web service URL, http:// or https:// and a host (and port), such as"
                                + " http://pulsar-broker:8080, was '" + text + "'");
                return Optional.empty();
            }
            return Optional.of(text.endsWith("/") ? text.substring(0, text.length() - 1) : text);
        });
    }

    private Optional<String> serviceUrl(Node node, String path) {
        Optional<String> url = reader.nonBlank(node, path).map(String::strip);
        if (url.isEmpty()) {
            return url;
        }
        String text = url.get();
        if ((text.startsWith("pulsar://") && text.length() > "pulsar://".length())
                || (text.startsWith("pulsar+ssl://") && text.length() > "pulsar+ssl://".length())) {
            Optional<String> port = Addresses.badPort(text);
            if (port.isPresent()) {
                reader.problem(
                        node,
                        path,
                        "port must be between 1 and 65535, was '" + port.get() + "' in '" + text
                                + "'; the broker listens on 6650, or 6651 for pulsar+ssl://");
                return Optional.empty();
            }
            return url;
        }
        String hint = text.startsWith("http://") || text.startsWith("https://")
                ? "; that is the web service (admin) URL, the client needs the binary protocol, usually port 6650"
                : "";
        reader.problem(
                node,
                path,
                "must be a pulsar:// or pulsar+ssl:// URL such as 'pulsar://localhost:6650', was '" + text + "'"
                        + hint);
        return Optional.empty();
    }

    private Optional<PulsarSettings.Authentication> authentication(Node node, String path, Optional<String> url) {
        Optional<NodeReader.Mapping> found = new KeyReader(reader, Level.AUTHENTICATION).mapping(node, path);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping auth = found.get();
        // authParams belongs to authPlugin; the other keys are one method each.
        List<String> methods = METHODS.stream().filter(auth::has).toList();
        if (methods.size() > 1) {
            reader.problem(
                    node,
                    path,
                    "names "
                            + (methods.size() == 2
                                    ? "both " + methods.get(0) + " and " + methods.get(1)
                                    : String.join(", ", methods))
                            + "; keep one of them");
            return Optional.empty();
        }
        if (auth.has("authParams") && !auth.has("authPlugin")) {
            reader.problem(
                    auth.get("authParams").get(),
                    auth.path("authParams"),
                    "is set without authPlugin; name"
                            + " the Authentication class with authPlugin, or remove authParams");
            return Optional.empty();
        }
        if (methods.isEmpty()) {
            reader.problem(
                    node,
                    path,
                    "names no method; write token: {env: NAME}, token: {file: path}, oauth2: {...},"
                            + " tls: {certFile: ..., keyFile: ...} or authPlugin: ..., or remove authentication");
            return Optional.empty();
        }
        switch (methods.get(0)) {
            case "token":
                return token(auth.get("token").get(), auth.path("token"));
            case "oauth2":
                return oauth2(auth.get("oauth2").get(), auth.path("oauth2"));
            case "tls":
                return clientCertificate(auth.get("tls").get(), auth.path("tls"), url);
            default:
                return plugin(auth);
        }
    }

    private static final List<String> METHODS = List.of("token", "oauth2", "tls", "authPlugin");

    private Optional<PulsarSettings.Authentication> token(Node node, String path) {
        return new TokenSource(reader, environment)
                .read(Level.PULSAR_TOKEN, node, path, "the token", PulsarSettings.Token::new, this::tokenFile);
    }

    /**
     * Read once here so that a missing or empty token is refused by validate; the client reads it again whenever the
     * file changes.
     */
    private Optional<PulsarSettings.Authentication> tokenFile(Node fileNode, String filePath) {
        return existingFile(fileNode, filePath).flatMap(file -> {
            try {
                String value = Files.readString(file, StandardCharsets.UTF_8).strip();
                if (value.isEmpty()) {
                    reader.problem(fileNode, filePath, "the token file '" + file + "' is empty");
                    return Optional.empty();
                }
                return Optional.of(new PulsarSettings.TokenFile(file));
            } catch (IOException e) {
                reader.problem(fileNode, filePath, "cannot read the token file '" + file + "': " + e);
                return Optional.empty();
            }
        });
    }

    private Optional<PulsarSettings.Authentication> clientCertificate(Node node, String path, Optional<String> url) {
        Optional<NodeReader.Mapping> found = new KeyReader(reader, Level.CLIENT_CERTIFICATE).mapping(node, path);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping tls = found.get();
        int before = reader.problemCount();
        Optional<Path> certFile = tls.get("certFile").flatMap(file -> existingFile(file, tls.path("certFile")));
        Optional<Path> keyFile = tls.get("keyFile").flatMap(file -> existingFile(file, tls.path("keyFile")));
        if (url.isPresent() && !url.get().startsWith("pulsar+ssl://")) {
            reader.problem(
                    node,
                    path,
                    "a client certificate needs a TLS connection, but serviceUrl '" + url.get()
                            + "' does not use TLS; use a pulsar+ssl:// URL (the broker's TLS port, usually 6651)");
        }
        if (reader.problemCount() != before || certFile.isEmpty() || keyFile.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new PulsarSettings.ClientCertificate(certFile.get(), keyFile.get()));
    }

    /**
     * {@code authPlugin} with its optional {@code authParams}. The parameters are never quoted in a problem: they
     * are where a plugin's secrets go.
     */
    private Optional<PulsarSettings.Authentication> plugin(NodeReader.Mapping auth) {
        Node classNode = auth.get("authPlugin").get();
        Optional<String> className = reader.nonBlank(classNode, auth.path("authPlugin"))
                .map(String::strip)
                .filter(name -> AuthenticationPlugins.check(name)
                        .map(message -> {
                            reader.problem(classNode, auth.path("authPlugin"), message);
                            return false;
                        })
                        .orElse(true));
        Optional<Secret> params = auth.get("authParams")
                .map(node -> authParams(node, auth.path("authParams")))
                .orElse(Optional.of(new Secret("")));
        if (className.isEmpty() || params.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new PulsarSettings.Plugin(className.get(), params.get()));
    }

    /**
     * A string, handed to the plugin as written, or a mapping of single values, handed over as a JSON object: the
     * form Pulsar's own plugins (token, TLS, OAuth2, Athenz, SASL) parse.
     */
    private Optional<Secret> authParams(Node node, String path) {
        if (node instanceof ScalarNode) {
            return reader.text(node, path).map(Secret::new);
        }
        Optional<NodeReader.Mapping> found = reader.mapping(node, path, List.of(), List.of());
        if (found.isEmpty()) {
            return Optional.empty();
        }
        int before = reader.problemCount();
        StringBuilder json = new StringBuilder("{");
        for (Map.Entry<String, Node> entry : found.get().entries().entrySet()) {
            Optional<String> value = reader.text(entry.getValue(), found.get().path(entry.getKey()));
            if (value.isPresent()) {
                json.append(json.length() > 1 ? "," : "")
                        .append(JsonText.quote(entry.getKey()))
                        .append(':')
                        .append(JsonText.quote(value.get()));
            }
        }
        return reader.problemCount() == before
                ? Optional.of(new Secret(json.append('}').toString()))
                : Optional.empty();
    }

    private Optional<PulsarSettings.Authentication> oauth2(Node node, String path) {
        Optional<NodeReader.Mapping> found = new KeyReader(reader, Level.OAUTH2).mapping(node, path);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping oauth2 = found.get();
        int before = reader.problemCount();
        Optional<String> issuerUrl = oauth2.get("issuerUrl").flatMap(url -> {
            Optional<String> text = reader.nonBlank(url, oauth2.path("issuerUrl"));
            if (text.isPresent()
                    && !text.get().startsWith("https://")
                    && !text.get().startsWith("http://")) {
                reader.problem(
                        url,
                        oauth2.path("issuerUrl"),
                        "must be an https:// URL of the authorization server, was '" + text.get() + "'");
                return Optional.empty();
            }
            return text;
        });
        Optional<Secret> credentialsUrl =
                oauth2.get("credentialsUrl").flatMap(url -> credentialsUrl(url, oauth2.path("credentialsUrl")));
        Optional<String> audience =
                oauth2.get("audience").flatMap(value -> reader.nonBlank(value, oauth2.path("audience")));
        Optional<String> scope = oauth2.get("scope").flatMap(value -> reader.nonBlank(value, oauth2.path("scope")));
        if (reader.problemCount() != before || issuerUrl.isEmpty() || credentialsUrl.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new PulsarSettings.OAuth2(issuerUrl.get(), credentialsUrl.get(), audience, scope));
    }

    /**
     * A {@code file:} URL (checked to exist, relative paths against the manifest's folder) or a {@code data:} URL.
     * A {@code data:} URL holds the client secret itself, so it is never quoted.
     */
    private Optional<Secret> credentialsUrl(Node node, String path) {
        Optional<String> text = reader.nonBlank(node, path).map(String::strip);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        String url = text.get();
        if (url.startsWith("data:")) {
            return Optional.of(new Secret(url));
        }
        if (!url.startsWith("file:")) {
            reader.problem(
                    node,
                    path,
                    "must be a file: URL of the client credentials JSON (such as"
                            + " 'file:///etc/pulsar/credentials.json') or a data: URL");
            return Optional.empty();
        }
        String location = url.substring("file:".length());
        if (location.startsWith("//")) {
            location = location.substring(2);
        }
        Path file = folder.resolve(location).normalize();
        if (!Files.isRegularFile(file)) {
            reader.problem(
                    node,
                    path,
                    "no credentials file at '" + file + "', was '" + url
                            + "'; relative paths are relative to the manifest's folder");
            return Optional.empty();
        }
        return Optional.of(new Secret("file://" + file));
    }

    private PulsarSettings.Tls tls(Node node, String path) {
        KeyReader keys = new KeyReader(reader, Level.TLS);
        Optional<NodeReader.Mapping> found = keys.mapping(node, path);
        if (found.isEmpty()) {
            return PulsarSettings.Tls.defaults();
        }
        NodeReader.Mapping tls = found.get();
        Optional<Path> trustCertsFile =
                tls.get("trustCertsFile").flatMap(file -> existingFile(file, tls.path("trustCertsFile")));
        boolean allowInsecureConnection = keys.boolOrDefault(tls, "allowInsecureConnection");
        Optional<Boolean> hostnameVerification = keys.bool(tls, "hostnameVerification");
        if (allowInsecureConnection && hostnameVerification.orElse(false)) {
            // Checking the name on a certificate nobody vouches for proves nothing; asking for both is a mistake.
            reader.problem(
                    tls.get("allowInsecureConnection").get(),
                    tls.path("allowInsecureConnection"),
                    "is true, which accepts any broker certificate, but hostnameVerification is true; remove"
                            + " allowInsecureConnection and trust the broker's CA with trustCertsFile, or set"
                            + " hostnameVerification: false (test clusters only)");
        }
        // An insecure connection skips hostname verification unless the manifest says otherwise.
        return new PulsarSettings.Tls(
                trustCertsFile, hostnameVerification.orElse(!allowInsecureConnection), allowInsecureConnection);
    }

    private Optional<Path> existingFile(Node node, String path) {
        return reader.nonBlank(node, path).flatMap(text -> {
            Path file = folder.resolve(text.strip()).normalize();
            if (!Files.isRegularFile(file)) {
                reader.problem(
                        node,
                        path,
                        "no file at '" + file + "', was '" + text
                                + "'; relative paths are relative to the manifest's folder");
                return Optional.empty();
            }
            return Optional.of(file);
        });
    }
}
