package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How to reach Pulsar.
 *
 * @param serviceUrl {@code pulsar://} or {@code pulsar+ssl://} URL
 * @param authentication none, a token, OAuth2 client credentials, a client certificate, or a plugin
 * @param tls trust settings for {@code pulsar+ssl://}
 * @param adminUrl the web service ({@code http://} or {@code https://}), where {@code jar: function://...}
 *     packages are fetched from; empty when none is given
 * @param packageCache where fetched packages are kept
 * @param packageMaxSize the largest package fetched, in bytes; a larger download is cut off and refused
 * @param packageTimeout how long a package download may take, all of it (a trickling server is cut off)
 */
public record PulsarSettings(
        String serviceUrl,
        Optional<Authentication> authentication,
        Tls tls,
        Optional<String> adminUrl,
        Path packageCache,
        long packageMaxSize,
        Duration packageTimeout) {
    /**
     * {@code pulsar.packageCache} when not given: {@code ~/.cache/settle/packages}, a folder of the runtime user's
     * own (created 0700), not the shared temporary folder, where any local user could plant a JAR and its sha256.
     */
    public static final Path DEFAULT_PACKAGE_CACHE =
            Path.of(System.getProperty("user.home"), ".cache", "settle", "packages");

    /** 100 MiB, as {@code admin.maxJarSize}: a shaded function with its libraries is tens of MiB. */
    public static final long DEFAULT_PACKAGE_MAX_SIZE = 100L * 1024 * 1024;

    public static final Duration DEFAULT_PACKAGE_TIMEOUT = Duration.ofMinutes(2);

    public PulsarSettings {
        Objects.requireNonNull(serviceUrl, "serviceUrl");
        Objects.requireNonNull(adminUrl, "adminUrl");
        Objects.requireNonNull(packageCache, "packageCache");
        Objects.requireNonNull(authentication, "authentication");
        Objects.requireNonNull(tls, "tls");
        Objects.requireNonNull(packageTimeout, "packageTimeout");
    }

    /** Without an admin URL. */
    public PulsarSettings(String serviceUrl, Optional<Authentication> authentication, Tls tls) {
        this(
                serviceUrl,
                authentication,
                tls,
                Optional.empty(),
                DEFAULT_PACKAGE_CACHE,
                DEFAULT_PACKAGE_MAX_SIZE,
                DEFAULT_PACKAGE_TIMEOUT);
    }

    public static PulsarSettings of(String serviceUrl) {
        return new PulsarSettings(serviceUrl, Optional.empty(), Tls.defaults());
    }

    /** How the client authenticates. */
    public sealed interface Authentication permits Token, TokenFile, OAuth2, ClientCertificate, Plugin {}

    /**
     * A JWT token, read from an environment variable when the manifest is loaded.
     *
     * @param token the token
     */
    public record Token(Secret token) implements Authentication {}

    /**
     * A JWT token in a file, which the client reads again when it changes (a rotated Kubernetes secret, a token
     * renewed by a sidecar), so that a running runtime goes on authenticating once the old token expires.
     *
     * @param file the file, checked at load time to exist and hold a token
     */
    public record TokenFile(Path file) implements Authentication {
        public TokenFile {
            Objects.requireNonNull(file, "file");
        }
    }

    /**
     * A TLS client certificate (mutual TLS): the broker takes the certificate's common name as the role.
     *
     * @param certFile the client's certificate chain, PEM
     * @param keyFile the client's private key, PEM (PKCS#8)
     */
    public record ClientCertificate(Path certFile, Path keyFile) implements Authentication {
        public ClientCertificate {
            Objects.requireNonNull(certFile, "certFile");
            Objects.requireNonNull(keyFile, "keyFile");
        }
    }

    /**
     * Any {@code org.apache.pulsar.client.api.Authentication} on the runtime's class path, configured as
     * {@code client.conf}'s {@code authPlugin} and {@code authParams}.
     *
     * @param className the plugin class, checked at load time to exist and implement Authentication
     * @param params its parameter string (a mapping in the manifest becomes a JSON object); empty for none
     */
    public record Plugin(String className, Secret params) implements Authentication {
        public Plugin {
            Objects.requireNonNull(className, "className");
            Objects.requireNonNull(params, "params");
        }
    }

    /**
     * OAuth2 client credentials.
     *
     * @param issuerUrl the authorization server
     * @param credentialsUrl a {@code file:} or {@code data:} URL of the client credentials JSON
     * @param audience the audience, when the server needs one
     * @param scope the scope, when the server needs one
     */
    public record OAuth2(String issuerUrl, Secret credentialsUrl, Optional<String> audience, Optional<String> scope)
            implements Authentication {}

    /**
     * TLS trust settings.
     *
     * @param trustCertsFile a PEM file of trusted certificates; empty for the JDK's
     * @param hostnameVerification whether the broker's host name must match its certificate
     * @param allowInsecureConnection whether an untrusted broker certificate is accepted (test clusters only)
     */
    public record Tls(Optional<Path> trustCertsFile, boolean hostnameVerification, boolean allowInsecureConnection) {
        public Tls {
            Objects.requireNonNull(trustCertsFile, "trustCertsFile");
        }

        public static Tls defaults() {
            return new Tls(Optional.empty(), true, false);
        }
    }
}
