package dev.settle.runtime;

import dev.settle.runtime.manifest.PulsarSettings;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.ClientBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.auth.oauth2.AuthenticationFactoryOAuth2;

/** The one Pulsar client of a runtime, from the manifest's {@code pulsar} section. */
final class PulsarClients {
    private PulsarClients() {}

    static PulsarClient create(PulsarSettings settings) throws PulsarClientException {
        ClientBuilder builder = PulsarClient.builder().serviceUrl(settings.serviceUrl());
        settings.authentication().ifPresent(authentication -> {
            if (authentication instanceof PulsarSettings.Token token) {
                builder.authentication(AuthenticationFactory.token(token.token().reveal()));
            } else if (authentication instanceof PulsarSettings.OAuth2 oauth2) {
                builder.authentication(AuthenticationFactoryOAuth2.clientCredentials(
                        url(oauth2.issuerUrl()),
                        url(oauth2.credentialsUrl().reveal()),
                        oauth2.audience().orElse(null),
                        oauth2.scope().orElse(null)));
            }
        });
        settings.tls().trustCertsFile().ifPresent(file -> builder.tlsTrustCertsFilePath(file.toString()));
        builder.enableTlsHostnameVerification(settings.tls().hostnameVerification());
        return builder.build();
    }

    private static URL url(String text) {
        try {
            return URI.create(text).toURL();
        } catch (MalformedURLException | IllegalArgumentException e) {
            // The manifest loader has checked these; this is a defect, not bad input.
            throw new IllegalStateException("not a URL after validation", e);
        }
    }
}
