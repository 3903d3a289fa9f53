package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * How to reach Pulsar.
 *
 * @param serviceUrl {@code pulsar://} or {@code pulsar+ssl://} URL
 * @param authentication none, a token, or OAuth2 client credentials
 * @param tls trust settings for {@code pulsar+ssl://}
 */
public record PulsarSettings(String serviceUrl, Optional<Authentication> authentication, Tls tls) {

    public PulsarSettings {
        Objects.requireNonNull(serviceUrl, "serviceUrl");
        Objects.requireNonNull(authentication, "authentication");
        Objects.requireNonNull(tls, "tls");
    }

    public static PulsarSettings of(String serviceUrl) {
        return new PulsarSettings(serviceUrl, Optional.empty(), Tls.defaults());
    }

    /** How the client authenticates. */
    public sealed interface Authentication permits Token, OAuth2 {}

    /**
     * A JWT token, read from an environment variable or a file when the manifest is loaded.
     *
     * @param token the token
     */
    public record Token(Secret token) implements Authentication {}

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
     */
    public record Tls(Optional<Path> trustCertsFile, boolean hostnameVerification) {
        public static Tls defaults() {
            return new Tls(Optional.empty(), true);
        }
    }
}
