package dev.settle.runtime.cli;

import dev.settle.runtime.PulsarClients;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.runtime.manifest.PulsarSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import picocli.CommandLine.Option;

/**
 * Where {@code produce} and {@code consume} connect: a manifest's {@code pulsar:} section (service URL,
 * authentication, TLS, as {@code settle run} would use them), or {@code --service-url} with an optional token file.
 */
final class PulsarConnection {
    static final String DEFAULT_SERVICE_URL = "pulsar://localhost:6650";

    @Option(
            names = "--manifest",
            paramLabel = "FILE",
            description = "connect as this manifest's settle run would: its pulsar: section (service URL,"
                    + " authentication, TLS; $${VAR} from the environment)")
    Path manifest;

    @Option(
            names = "--service-url",
            paramLabel = "URL",
            description = "the broker's binary protocol URL (default: " + DEFAULT_SERVICE_URL + ", what settle dev"
                    + " serves)")
    String serviceUrl;

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            description = "with --service-url: a file holding the JWT token to authenticate with")
    Path tokenFile;

    /** A refusal of the options or of the manifest, already in words; exit code included. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        final int exitCode;

        Refused(String message, int exitCode) {
            super(message, null, false, false);
            this.exitCode = exitCode;
        }
    }

    /**
     * The connection settings, refused before anything connects when the service URL is the broker's HTTP port or
     * when no broker answers there.
     */
    PulsarSettings settings() throws Refused {
        PulsarSettings settings = read();
        Optional<String> httpPort = ServiceUrlProbe.httpInsteadOfPulsar(settings.serviceUrl());
        if (httpPort.isPresent()) {
            throw new Refused(
                    (manifest != null ? manifest + ": pulsar.serviceUrl " : "--service-url ") + httpPort.get(),
                    manifest != null ? Main.INVALID : Main.USAGE);
        }
        Optional<String> unreachable = ServiceUrlProbe.unreachable(settings.serviceUrl());
        if (unreachable.isPresent()) {
            throw new Refused(
                    unreachable.get()
                            + (manifest != null ? " (pulsar.serviceUrl in " + manifest + ")" : " with --service-url"),
                    Main.UNREACHABLE);
        }
        return settings;
    }

    private PulsarSettings read() throws Refused {
        if (manifest != null && (serviceUrl != null || tokenFile != null)) {
            throw new Refused(
                    "--manifest gives the connection; --service-url and --token-file cannot be added to it: use one"
                            + " or the other",
                    Main.USAGE);
        }
        if (manifest != null) {
            try {
                return ManifestLoader.loadWithoutJars(manifest, System.getenv()).pulsar();
            } catch (ManifestException refused) {
                throw new Refused(refused.getMessage(), Main.INVALID);
            } catch (IOException unreadable) {
                throw new Refused(
                        "cannot read manifest '" + manifest + "': " + Refusals.reason(unreadable), Main.INVALID);
            }
        }
        String url = serviceUrl != null ? serviceUrl : DEFAULT_SERVICE_URL;
        if (!url.startsWith("pulsar://") && !url.startsWith("pulsar+ssl://")) {
            throw new Refused(
                    "--service-url must be a pulsar:// or pulsar+ssl:// URL (the broker's binary protocol port,"
                            + " 6650 or 6651), was '" + url + "'",
                    Main.USAGE);
        }
        return new PulsarSettings(
                url, Optional.ofNullable(tokenFile).map(PulsarSettings.TokenFile::new), PulsarSettings.Tls.defaults());
    }

    PulsarClient client(PulsarSettings settings) throws PulsarClientException {
        return PulsarClients.create(settings);
    }

    /** A client for one command, closed without waiting ({@link Released}). */
    Released open(PulsarSettings settings) throws PulsarClientException {
        return new Released(client(settings));
    }

    /**
     * A command's client, closed in the background: the client's close waits about 1.2 s for its event loops to wind
     * down (measured with a local broker; a produce took 3.0 s, 1.3 s of it waiting), and nothing is left to wait for
     * once the command's producer or consumer is closed (its messages stored, its acknowledgements flushed). The JVM
     * exits right after; in a test, the close ends a moment later on the client's own threads.
     */
    record Released(PulsarClient client) implements AutoCloseable {
        @Override
        public void close() {
            client.closeAsync();
        }
    }
}
