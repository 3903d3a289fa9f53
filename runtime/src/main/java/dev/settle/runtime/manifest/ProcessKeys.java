package dev.settle.runtime.manifest;

import static dev.settle.runtime.manifest.KeyRow.key;
import static dev.settle.runtime.manifest.ManifestKey.Level.ADMIN;
import static dev.settle.runtime.manifest.ManifestKey.Level.ADMIN_TOKEN;
import static dev.settle.runtime.manifest.ManifestKey.Level.AUTHENTICATION;
import static dev.settle.runtime.manifest.ManifestKey.Level.CLIENT_CERTIFICATE;
import static dev.settle.runtime.manifest.ManifestKey.Level.HTTP;
import static dev.settle.runtime.manifest.ManifestKey.Level.OAUTH2;
import static dev.settle.runtime.manifest.ManifestKey.Level.PULSAR;
import static dev.settle.runtime.manifest.ManifestKey.Level.PULSAR_TOKEN;
import static dev.settle.runtime.manifest.ManifestKey.Level.ROOT;
import static dev.settle.runtime.manifest.ManifestKey.Level.SHUTDOWN;
import static dev.settle.runtime.manifest.ManifestKey.Level.STARTUP;
import static dev.settle.runtime.manifest.ManifestKey.Level.TLS;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.BOOLEAN;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.CLASS_NAME;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.DURATION;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.ENUM;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.INTEGER;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.LIST;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.MAPPING;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.PATH;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.SECRET_SOURCE;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.SIZE;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.STRING;
import static dev.settle.runtime.manifest.ManifestKey.ValueType.STRING_OR_MAPPING;

import dev.settle.runtime.manifest.ManifestKey.Reload;
import java.util.List;

/**
 * The rows of {@link ManifestKeys}' table for the process: the top level and its sections ({@code pulsar:} with its
 * authentication and TLS, {@code http:}, {@code startup:}, {@code shutdown:}, {@code admin:}). A reload refuses to
 * change them, unless a row says otherwise.
 */
final class ProcessKeys {
    private static final String PORT_RANGE = "must be between 0 and 65535 (0 picks a free port), was '%s'";

    /** The rows, in the order problems list them. */
    static final List<KeyRow> ROWS = List.of(
            key(ROOT, "pulsar", MAPPING).required().doc("how to reach Pulsar"),
            key(ROOT, "http", MAPPING).doc("where /metrics, /livez and /readyz are served"),
            key(ROOT, "startup", MAPPING).doc("how long the runtime may take to start"),
            key(ROOT, "shutdown", MAPPING).doc("how the runtime stops"),
            key(ROOT, "tracing", BOOLEAN).byDefault("false").doc("trace each handling with OpenTelemetry"),
            key(ROOT, "admin", MAPPING).doc("the admin API that takes handler JARs while running; off when absent"),
            key(ROOT, "subscriptions", LIST).required().reload(Reload.PER_ENTRY).doc("one consumer and handler each"),
            key(PULSAR, "serviceUrl", STRING).required().doc("the broker's binary protocol URL"),
            key(PULSAR, "authentication", MAPPING).doc("exactly one method: token, oauth2, tls or authPlugin"),
            key(PULSAR, "tls", MAPPING).doc("trust settings for pulsar+ssl://"),
            key(PULSAR, "adminUrl", STRING).doc("the web service URL packages are fetched from"),
            key(PULSAR, "allowHttpAdminUrl", BOOLEAN)
                    .byDefault("false")
                    .doc("accept an http:// adminUrl to another host although credentials then cross in clear"),
            key(PULSAR, "packageCache", PATH)
                    .computed("`~/.cache/settle/packages`")
                    .doc("where fetched packages are kept; this user's own folder"),
            key(PULSAR, "packageMaxSize", SIZE).byDefault("100MiB").doc("the largest package fetched"),
            key(PULSAR, "packageTimeout", DURATION).byDefault("2m").doc("how long a package download may take"),
            key(AUTHENTICATION, "token", SECRET_SOURCE).doc("a token, from an environment variable or a file"),
            key(AUTHENTICATION, "oauth2", MAPPING).doc("OAuth2 client credentials"),
            key(AUTHENTICATION, "tls", MAPPING).doc("a TLS client certificate (mutual TLS)"),
            key(AUTHENTICATION, "authPlugin", CLASS_NAME).doc("any Authentication class on the class path"),
            key(AUTHENTICATION, "authParams", STRING_OR_MAPPING).doc("the plugin's parameters"),
            key(PULSAR_TOKEN, "env", STRING).doc("the environment variable holding the token"),
            key(PULSAR_TOKEN, "file", PATH).doc("a file holding the token, read again when it changes"),
            key(OAUTH2, "issuerUrl", STRING).required().doc("the authorization server"),
            key(OAUTH2, "credentialsUrl", STRING).required().doc("a file: or data: URL of the client credentials"),
            key(OAUTH2, "audience", STRING).doc("the audience, when the server needs one"),
            key(OAUTH2, "scope", STRING).doc("the scope, when the server needs one"),
            key(CLIENT_CERTIFICATE, "certFile", PATH).required().doc("the client's certificate, PEM"),
            key(CLIENT_CERTIFICATE, "keyFile", PATH).required().doc("the client's private key, PEM (PKCS#8)"),
            key(TLS, "trustCertsFile", PATH).doc("PEM file of trusted certificates; absent: the JDK's"),
            key(TLS, "hostnameVerification", BOOLEAN)
                    .byDefault("true")
                    .doc("whether the broker's host name must match its certificate (false with insecure)"),
            key(TLS, "allowInsecureConnection", BOOLEAN)
                    .byDefault("false")
                    .doc("accept any broker certificate: test clusters only"),
            key(HTTP, "port", INTEGER)
                    .byDefault("8080")
                    .atLeast(0)
                    .atMost(65535, PORT_RANGE)
                    .doc("0 picks a free port"),
            key(HTTP, "bindAddress", STRING).byDefault("0.0.0.0").doc("the address to bind"),
            key(HTTP, "probeDetail", BOOLEAN).byDefault("true").doc("whether probe bodies name what fails"),
            key(STARTUP, "timeout", DURATION).byDefault("5m").doc("how long open() may take before /livez fails"),
            key(SHUTDOWN, "grace", DURATION)
                    .byDefault("20s")
                    .doc("how long calls and close() may run on after SIGTERM"),
            key(ADMIN, "port", INTEGER)
                    .byDefault("8081")
                    .atLeast(0)
                    .atMost(65535, PORT_RANGE)
                    .doc("its own port, never http.port"),
            key(ADMIN, "bindAddress", STRING).byDefault("127.0.0.1").doc("the address to bind"),
            key(ADMIN, "token", SECRET_SOURCE).required().doc("the bearer token every request must carry"),
            key(ADMIN, "dataDir", PATH).required().doc("where uploaded JARs and generations are kept"),
            key(ADMIN, "maxJarSize", SIZE).byDefault("100MiB").doc("the largest JAR accepted"),
            key(ADMIN, "retiredLoaderCheck", DURATION)
                    .byDefault("60s")
                    .doc("how long a retired class loader may stay reachable before its pinning threads are logged"),
            key(ADMIN, "codeStore", ENUM)
                    .allowed("disk", "pulsar")
                    .byDefault("disk")
                    .doc("where generations are kept: this pod's disk, or Pulsar for any number of replicas"),
            key(ADMIN, "codeNamespace", STRING).doc("the tenant/namespace of the code packages and topics"),
            key(ADMIN_TOKEN, "env", STRING).doc("the environment variable holding the token"),
            key(ADMIN_TOKEN, "file", PATH).doc("a file holding the token"));

    private ProcessKeys() {}
}
