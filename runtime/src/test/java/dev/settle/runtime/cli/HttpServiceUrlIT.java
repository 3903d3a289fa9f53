package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code pulsar://} URL on the broker's HTTP port (issue 30, item 6): the client alone says "Connection already
 * closed" for ever; Settle names the port for what it is, before it connects, and exits instead of waiting.
 */
class HttpServiceUrlIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int settle(String... args) {
        return Main.execute(
                List.of(args),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Map.of());
    }

    private String httpPortAsPulsar() {
        URI admin = URI.create(pulsar.endpoints().adminUrl());
        return "pulsar://" + admin.getHost() + ":" + admin.getPort();
    }

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES) // without the check, run waits for a broker for ever
    void runRefusesAServiceUrlOnTheHttpPortNamingTheLineAndThePortToUse(@TempDir Path folder) throws Exception {
        TestJar.orderHandler(folder.resolve("orders.jar"));
        String url = httpPortAsPulsar();
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                subscriptions:
                  - name: orders
                    topics: [persistent://public/default/http-port-orders]
                    jar: orders.jar
                """.formatted(url));

        long started = System.nanoTime();
        assertThat(settle("run", manifest.toString())).isEqualTo(Main.INVALID);

        assertThat((System.nanoTime() - started) / 1_000_000_000.0)
                .as("seconds")
                .isLessThan(30);
        String host = URI.create(pulsar.endpoints().adminUrl()).getHost();
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains(manifest + ":2:15: pulsar.serviceUrl: '" + url + "' answers in HTTP: that is the broker's"
                        + " HTTP port (the web service, for admin URLs); use pulsar://" + host + ":6650")
                .contains("settle: refusing to start; fix pulsar.serviceUrl in " + manifest);
    }

    @Test
    void produceRefusesAServiceUrlOnTheHttpPortBeforeConnecting() {
        String url = httpPortAsPulsar();
        assertThat(settle("produce", "persistent://public/default/http-port", "--service-url", url, "x"))
                .isEqualTo(Main.USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--service-url '" + url + "' answers in HTTP: that is the broker's HTTP port");
    }

    @Test
    void theBinaryPortIsNotMistakenForHttp() {
        assertThat(ServiceUrlProbe.httpInsteadOfPulsar(pulsar.endpoints().serviceUrl()))
                .isEmpty();
    }

    @Test
    void theBrokerAnswersTheProbeAsAnyClientsConnectInsteadOfLoggingAMalformedCommand() throws Exception {
        URI url = URI.create(pulsar.endpoints().serviceUrl());
        try (java.net.Socket socket = new java.net.Socket(url.getHost(), url.getPort())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(ServiceUrlProbe.FRAME);
            byte[] answer = socket.getInputStream().readNBytes(10);

            // A frame back whose BaseCommand is type 3, CONNECTED; a malformed probe got no answer, only a stack
            // trace in the broker's log at every start.
            assertThat(answer).hasSize(10);
            assertThat(answer[8]).isEqualTo((byte) 0x08);
            assertThat(answer[9]).isEqualTo((byte) 3);
        }
    }
}
