package dev.settle.runtime.admin;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Issue 32: clients that connect and then send nothing, or a byte at a time, cannot take the probe port or the
 * admin API away from everyone else, against a real broker and the real runtime.
 */
@ExtendWith(PulsarBroker.class)
class SlowClientsIT {
    private static final String TOKEN = "a-test-admin-token-of-forty-characters--";
    /** More than either port's workers (4) and the JDK server's two threads this replaced. */
    private static final int SLOW_CLIENTS = 12;

    @TempDir
    Path folder;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean trickling = true;
    private Settle settle;

    @BeforeEach
    void start(PulsarEndpoints pulsar) throws Exception {
        Files.writeString(folder.resolve("token.txt"), TOKEN + "\n");
        TestJar.orderHandler(folder.resolve("orders.jar"));
        Path manifest = folder.resolve("settle.yaml");
        Files.writeString(manifest, """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                admin:
                  port: 0
                  token: {file: token.txt}
                  dataDir: data
                subscriptions:
                  - name: orders
                    topics: [persistent://public/default/slow-clients-%d]
                    jar: orders.jar
                """.formatted(pulsar.serviceUrl(), System.nanoTime()));
        settle = Settle.start(Preflight.check(manifest, System.getenv()), Duration.ofSeconds(5));
    }

    @AfterEach
    void stop() throws IOException {
        trickling = false;
        for (Socket socket : sockets) {
            socket.close();
        }
        if (settle != null) {
            settle.close();
            settle.deployment().close();
        }
    }

    @Test
    void livezAnswersWithinASecondAndAnUploadCompletesWhileSilentAndTricklingClientsHoldConnections() throws Exception {
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.list = new CopyOnWriteArrayList<>();
        logged.start();
        List<Logger> loggers = List.of((Logger) LoggerFactory.getLogger(HealthEndpoint.class), (Logger)
                LoggerFactory.getLogger(AdminServer.class));
        loggers.forEach(logger -> logger.addAppender(logged));
        int healthPort = settle.httpPort();
        int adminPort = settle.adminPort().orElseThrow();
        try {
            for (int port : new int[] {healthPort, adminPort}) {
                for (int i = 0; i < SLOW_CLIENTS; i++) {
                    silent(port);
                }
            }
            Thread trickler = new Thread(() -> trickle(healthPort, adminPort), "trickler");
            trickler.setDaemon(true);
            trickler.start();
            Thread.sleep(300);

            byte[] jar = Files.readAllBytes(TestJar.orderHandler(folder.resolve("orders-2.jar")));
            CompletableFuture<HttpResponse<String>> upload = http.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/v1/subscriptions/orders/jar"))
                            .header("Authorization", "Bearer " + TOKEN)
                            .timeout(Duration.ofSeconds(20))
                            .PUT(HttpRequest.BodyPublishers.ofByteArray(jar))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());

            // Past the 5 s head deadline, so that dropped clients come back and keep the pressure on.
            List<Long> millis = new ArrayList<>();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
            while (System.nanoTime() < end) {
                long began = System.nanoTime();
                HttpResponse<String> livez = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/livez"))
                                .timeout(Duration.ofSeconds(3))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began));
                assertThat(livez.statusCode()).isEqualTo(200);
                Thread.sleep(100);
            }
            assertThat(millis).hasSizeGreaterThan(20).allMatch(taken -> taken < 1000, "under a second");

            HttpResponse<String> answer = upload.get(20, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            assertThat(answer.body()).contains("\"generation\":2");
            HttpResponse<String> status = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/v1/subscriptions"))
                            .header("Authorization", "Bearer " + TOKEN)
                            .timeout(Duration.ofSeconds(3))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(status.statusCode()).isEqualTo(200);
        } finally {
            loggers.forEach(logger -> logger.detachAppender(logged));
        }
        assertThat(logged.list)
                .as("no stack trace for an abandoned request")
                .allMatch(event -> event.getThrowableProxy() == null);
    }

    @Test
    void afterTenWrongTokensGuessingIsHeldToOneASecond() throws Exception {
        int adminPort = settle.adminPort().orElseThrow();
        int refused = 0;
        int throttled = 0;
        long began = System.nanoTime();
        for (int guess = 0; guess < 40; guess++) {
            int status = status(adminPort, "guess-" + guess + "-".repeat(32));
            if (status == 401) {
                refused++;
            } else if (status == 429) {
                throttled++;
            }
        }
        double seconds = (System.nanoTime() - began) / 1e9;
        // Compared: the burst of ten, and one per second elapsed since.
        assertThat(refused).isBetween(10, 10 + (int) Math.ceil(seconds) + 1);
        assertThat(refused + throttled).isEqualTo(40);

        assertThat(status(adminPort, TOKEN))
                .as("the right token waits out the second too")
                .isEqualTo(429);
        Thread.sleep(1100);
        assertThat(status(adminPort, TOKEN)).isEqualTo(200);
    }

    @Test
    void aPlusInASubscriptionsNameIsAPlusNotASpace() throws Exception {
        HttpResponse<String> answer = http.send(
                HttpRequest.newBuilder(URI.create(
                                "http://127.0.0.1:" + settle.adminPort().orElseThrow() + "/v1/subscriptions/or+ders"))
                        .header("Authorization", "Bearer " + TOKEN)
                        .timeout(Duration.ofSeconds(3))
                        .build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(answer.statusCode()).isEqualTo(404);
        assertThat(answer.body()).contains("no subscription 'or+ders'");
    }

    private int status(int adminPort, String token) throws Exception {
        return http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/v1/subscriptions"))
                                .header("Authorization", "Bearer " + token)
                                .timeout(Duration.ofSeconds(3))
                                .build(),
                        HttpResponse.BodyHandlers.discarding())
                .statusCode();
    }

    /** Connects and sends one byte of a request, then nothing. */
    private void silent(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        sockets.add(socket);
        socket.getOutputStream().write('G');
    }

    /** Keeps {@link #SLOW_CLIENTS} connections on each port sending a header a byte every 200 ms, reconnecting. */
    private void trickle(int... ports) {
        byte[] head = ("GET /v1/subscriptions HTTP/1.1\r\nHost: x\r\nX-Slow: " + "s".repeat(10_000))
                .getBytes(StandardCharsets.US_ASCII);
        List<Socket> open = new ArrayList<>();
        List<Integer> portOf = new ArrayList<>();
        List<Integer> sent = new ArrayList<>();
        try {
            while (trickling) {
                for (int i = 0; i < open.size(); i++) {
                    try {
                        OutputStream out = open.get(i).getOutputStream();
                        out.write(head[sent.get(i) % head.length]);
                        out.flush();
                        sent.set(i, sent.get(i) + 1);
                    } catch (IOException dropped) {
                        open.get(i).close();
                        open.set(i, connect(portOf.get(i)));
                        sent.set(i, 0);
                    }
                }
                if (open.isEmpty()) {
                    for (int port : ports) {
                        for (int i = 0; i < SLOW_CLIENTS; i++) {
                            open.add(connect(port));
                            portOf.add(port);
                            sent.add(0);
                        }
                    }
                }
                Thread.sleep(200);
            }
        } catch (IOException | InterruptedException e) {
            // The test is over.
        }
    }

    private Socket connect(int port) throws IOException {
        Socket socket = new Socket("127.0.0.1", port);
        sockets.add(socket);
        return socket;
    }
}
