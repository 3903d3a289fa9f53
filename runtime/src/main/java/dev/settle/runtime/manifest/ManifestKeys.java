package dev.settle.runtime.manifest;

import java.util.List;

/**
 * The keys the manifest accepts at the top and in {@code pulsar} and {@code http}, and which are required
 * (a subscription's are {@code SubscriptionReader.KEYS}). The loader checks against these
 * lists, and a test holds {@code settle-manifest.schema.json} to them, so the schema cannot drift from the loader.
 */
final class ManifestKeys {
    static final List<String> ROOT =
            List.of("pulsar", "http", "startup", "shutdown", "tracing", "admin", "subscriptions");
    static final List<String> ROOT_REQUIRED = List.of("pulsar", "subscriptions");

    static final List<String> PULSAR = List.of(
            "serviceUrl",
            "authentication",
            "tls",
            "adminUrl",
            "allowHttpAdminUrl",
            "packageCache",
            "packageMaxSize",
            "packageTimeout");
    static final List<String> PULSAR_REQUIRED = List.of("serviceUrl");

    static final List<String> AUTHENTICATION = List.of("token", "oauth2", "tls", "authPlugin", "authParams");
    static final List<String> TOKEN = List.of("env", "file");
    static final List<String> OAUTH2 = List.of("issuerUrl", "credentialsUrl", "audience", "scope");
    static final List<String> OAUTH2_REQUIRED = List.of("issuerUrl", "credentialsUrl");
    static final List<String> CLIENT_CERTIFICATE = List.of("certFile", "keyFile");
    static final List<String> TLS = List.of("trustCertsFile", "hostnameVerification", "allowInsecureConnection");

    static final List<String> HTTP = List.of("port", "bindAddress", "probeDetail");
    static final List<String> STARTUP = List.of("timeout");
    static final List<String> SHUTDOWN = List.of("grace");
    static final List<String> ADMIN = List.of(
            "port",
            "bindAddress",
            "token",
            "dataDir",
            "maxJarSize",
            "retiredLoaderCheck",
            "codeStore",
            "codeNamespace");
    static final List<String> ADMIN_REQUIRED = List.of("token", "dataDir");

    private ManifestKeys() {}
}
