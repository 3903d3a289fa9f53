package dev.settle.runtime;

import dev.settle.runtime.manifest.PulsarSettings;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.pulsar.client.api.Authentication;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.ClientBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.ClientBuilderImpl;
import org.apache.pulsar.client.impl.PulsarClientImpl;
import org.apache.pulsar.client.impl.auth.oauth2.AuthenticationFactoryOAuth2;
import org.apache.pulsar.client.impl.conf.ClientConfigurationData;

/** The one Pulsar client of a runtime, from the manifest's {@code pulsar} section. */
public final class PulsarClients {
    static final int KEEP_ALIVE_SECONDS = 5;
    static final int MAX_RECONNECT_WAIT_SECONDS = 5;

    private PulsarClients() {}

    public static PulsarClient create(PulsarSettings settings) throws PulsarClientException {
        return create(settings, System::nanoTime);
    }

    /**
     * A client that can begin transactions (exactly-once subscriptions): unlike {@link #create}, its build connects
     * to the transaction coordinator, and fails when it cannot be reached or is off.
     */
    public static PulsarClient createWithTransactions(PulsarSettings settings) throws PulsarClientException {
        return build(builder(settings, System::nanoTime).enableTransaction(true));
    }

    /** @param nanoTime the clock that paces re-reading a token file */
    static PulsarClient create(PulsarSettings settings, LongSupplier nanoTime) throws PulsarClientException {
        return build(builder(settings, nanoTime));
    }

    /**
     * What {@link ClientBuilder#build()} does for the settings given here, with the process's {@link SharedTimer}
     * in place of a timer of the client's own (the public builder offers a shared timer only as another wheel that
     * wakes every tick). The builder's own checks are for settings it is not given here: a service URL provider, and
     * authentication from {@code loadConf} properties.
     */
    private static PulsarClient build(ClientBuilder builder) throws PulsarClientException {
        ClientConfigurationData conf = ((ClientBuilderImpl) builder).getClientConfigurationData();
        return PulsarClientImpl.builder().conf(conf).timer(SharedTimer.INSTANCE).build();
    }

    private static ClientBuilder builder(PulsarSettings settings, LongSupplier nanoTime) throws PulsarClientException {
        ClientBuilder builder = PulsarClient.builder()
                .serviceUrl(settings.serviceUrl())
                // A network cut sends no RST and no FIN: the connection looks open until a ping goes unanswered, and
                // the client pings every keepAliveInterval and gives up at the next tick. At the client's default of
                // 30 s a cut was noticed after 30 to 60 s, so /readyz stayed 200 through a 20 s cut and the
                // reconnection began late (NetworkCutIT); at 5 s it is noticed within 10 s, for one small ping
                // command per connection every 5 s.
                .keepAliveInterval(KEEP_ALIVE_SECONDS, TimeUnit.SECONDS)
                // The client waits longer and longer between reconnection attempts, up to a minute by default: after
                // a 20 s cut it was 12.5 s late to notice the link was back. At most 5 s, as a subscription waits
                // between attempts to subscribe (Subscriber.MAX_WAIT): one connection attempt per 5 s in an outage.
                .maxBackoffInterval(MAX_RECONNECT_WAIT_SECONDS, TimeUnit.SECONDS);
        if (settings.authentication().isPresent()) {
            builder.authentication(authentication(settings.authentication().get(), nanoTime));
        }
        settings.tls().trustCertsFile().ifPresent(file -> builder.tlsTrustCertsFilePath(file.toString()));
        builder.enableTlsHostnameVerification(settings.tls().hostnameVerification());
        builder.allowTlsInsecureConnection(settings.tls().allowInsecureConnection());
        return builder;
    }

    private static Authentication authentication(PulsarSettings.Authentication authentication, LongSupplier nanoTime)
            throws PulsarClientException {
        if (authentication instanceof PulsarSettings.Token token) {
            return AuthenticationFactory.token(token.token().reveal());
        }
        if (authentication instanceof PulsarSettings.TokenFile tokenFile) {
            try {
                return AuthenticationFactory.token(RereadTokenFile.open(tokenFile.file(), nanoTime));
            } catch (IOException e) {
                throw new PulsarClientException("cannot read the token file " + tokenFile.file() + ": " + e);
            }
        }
        if (authentication instanceof PulsarSettings.OAuth2 oauth2) {
            return AuthenticationFactoryOAuth2.clientCredentials(
                    url(oauth2.issuerUrl()),
                    url(oauth2.credentialsUrl().reveal()),
                    oauth2.audience().orElse(null),
                    oauth2.scope().orElse(null));
        }
        if (authentication instanceof PulsarSettings.ClientCertificate certificate) {
            return AuthenticationFactory.TLS(
                    certificate.certFile().toString(), certificate.keyFile().toString());
        }
        PulsarSettings.Plugin plugin = (PulsarSettings.Plugin) authentication;
        // The string form, as client.conf's authParams: every Pulsar plugin parses it (JSON or key:value pairs).
        return AuthenticationFactory.create(plugin.className(), plugin.params().reveal());
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
