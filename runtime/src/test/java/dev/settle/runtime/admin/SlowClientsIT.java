package dev.settle.runtime.admin;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Issue 32: clients that connect and then send nothing, or a byte at a time, cannot take the probe port or the
 * admin API away from everyone else, against a real broker and the real runtime.
 */
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

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @BeforeEach
    void start() throws Exception {
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
                    topics: [%s]
                    jar: orders.jar
                """.formatted(pulsar.endpoints().serviceUrl(), pulsar.topic("slow-clients")));
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
            Waits.pause(Duration.ofMillis(300), "the trickling clients' head start, before the upload");

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
                Waits.pause(Duration.ofMillis(100), "a probe period: the slow clients keep the pressure on meanwhile");
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

    /**
     * Issue 40: a request that announces a body and never sends it. Before, the server read such a body away for up to
     * 2 s on a worker after answering: 60 of them held open (25 new a second) took the probe port's four workers and
     * its queue, and /livez answered 503; on the admin port the operator got 503.
     */
    @Test
    void livezAndTheOperatorAreAnsweredWhileSixtySlowBodiesFloodEachPort() throws Exception {
        int healthPort = settle.httpPort();
        int adminPort = settle.adminPort().orElseThrow();
        for (int port : new int[] {healthPort, adminPort}) {
            for (int i = 0; i < SLOW_CLIENTS; i++) {
                silent(port);
            }
        }
        Thread trickler = new Thread(() -> trickle(healthPort, adminPort), "trickler");
        trickler.setDaemon(true);
        trickler.start();
        List<String> failures = new ArrayList<>();

        try (SlowBodies flood = new SlowBodies(healthPort, "GET /livez")) {
            flood.awaitOpen();
            failures.addAll(probeLivez(healthPort, "probe port flooded"));
        }
        try (SlowBodies flood = new SlowBodies(adminPort, "PUT /v1/subscriptions/orders/jar")) {
            flood.awaitOpen();
            byte[] jar = Files.readAllBytes(TestJar.orderHandler(folder.resolve("orders-2.jar")));
            CompletableFuture<HttpResponse<String>> upload = http.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + adminPort + "/v1/subscriptions/orders/jar"))
                            .header("Authorization", "Bearer " + TOKEN)
                            .timeout(Duration.ofSeconds(20))
                            .PUT(HttpRequest.BodyPublishers.ofByteArray(jar))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            failures.addAll(probeLivez(healthPort, "admin port flooded"));
            for (int i = 0; i < 10; i++) {
                String status;
                try {
                    status = Integer.toString(status(adminPort, TOKEN));
                } catch (IOException e) {
                    status = e.toString();
                }
                if (!status.equals("200")) {
                    failures.add("admin port flooded: the operator's status request " + i + " answered " + status);
                }
            }
            HttpResponse<String> answer = upload.get(20, TimeUnit.SECONDS);
            if (answer.statusCode() != 200 || !answer.body().contains("\"generation\":2")) {
                failures.add("admin port flooded: the upload answered " + answer.statusCode() + " " + answer.body());
            }
            assertThat(flood.opened()).as("slow bodies sent").isGreaterThan(100);
        }
        assertThat(failures).as(failures.size() + " failures").isEmpty();
    }

    /** 100 probes of /livez, 50 ms apart: what was not 200 within a second. */
    private List<String> probeLivez(int healthPort, String while_) throws InterruptedException {
        List<String> failures = new ArrayList<>();
        long slowest = 0;
        for (int probe = 0; probe < 100; probe++) {
            long began = System.nanoTime();
            String outcome;
            try {
                outcome = Integer.toString(http.send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + healthPort + "/livez"))
                                        .timeout(Duration.ofSeconds(3))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .statusCode());
            } catch (IOException e) {
                outcome = e.toString();
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
            slowest = Math.max(slowest, millis);
            if (!outcome.equals("200") || millis >= 1000) {
                failures.add(while_ + ": /livez probe " + probe + ": " + outcome + " in " + millis + " ms");
            }
            Waits.pause(Duration.ofMillis(50), "a probe period: the flood goes on meanwhile");
        }
        System.out.println(while_ + ": 100 /livez probes, " + failures.size() + " failed, slowest " + slowest + " ms; "
                + failures.stream().limit(3).toList());
        return failures;
    }

    /**
     * Opens a connection every 40 ms that sends a complete request head announcing {@code Content-Length: 1000000}
     * and then nothing, and keeps each open 2.5 s: about 60 open at any time.
     */
    private static final class SlowBodies implements AutoCloseable {
        private final Thread thread;
        private final AtomicInteger opened = new AtomicInteger();
        private volatile boolean running = true;

        SlowBodies(int port, String requestLine) {
            byte[] head = (requestLine + " HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII);
            thread = new Thread(() -> flood(port, head), "slow-bodies-" + port);
            thread.setDaemon(true);
            thread.start();
        }

        private void flood(int port, byte[] head) {
            ArrayDeque<Socket> open = new ArrayDeque<>();
            ArrayDeque<Long> openedAt = new ArrayDeque<>();
            try {
                while (running) {
                    long now = System.nanoTime();
                    while (!openedAt.isEmpty() && now - openedAt.peek() > TimeUnit.MILLISECONDS.toNanos(2500)) {
                        openedAt.poll();
                        closeQuietly(open.poll());
                    }
                    Socket socket = new Socket();
                    try {
                        socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                        socket.getOutputStream().write(head);
                        socket.getOutputStream().flush();
                        opened.incrementAndGet();
                    } catch (IOException refused) {
                        // The server may refuse or reset: the flood goes on.
                    }
                    open.add(socket);
                    openedAt.add(now);
                    Waits.pause(Duration.ofMillis(40), "the flood's pace: 25 new connections a second");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                open.forEach(SlowBodies::closeQuietly);
            }
        }

        /** Waits until about 60 are open. */
        void awaitOpen() {
            Waits.until("60 slow-body connections open", Duration.ofSeconds(30), opened::get, count -> count >= 60);
        }

        int opened() {
            return opened.get();
        }

        private static void closeQuietly(Socket socket) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // Gone either way.
            }
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(5000);
        }
    }

    @Test
    void afterTenWrongTokensAPeersWrongTokensAreHeldToOneASecondButTheRightTokenIsServed() throws Exception {
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
                .as("the right token is compared first, never throttled")
                .isEqualTo(200);
    }

    /**
     * Issue 40: the throttle was one bucket for the port, spent by requests without any token too, so an
     * unauthenticated peer made the operator's right token get 429. Now only wrong tokens spend a bucket, the
     * sender's own, and the right token is served whatever the buckets hold.
     */
    @Test
    void noFloodOfMissingOrWrongTokensMakesTheRightTokenGet429() throws Exception {
        int adminPort = settle.adminPort().orElseThrow();
        List<String> answers = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            answers.add("unauthenticated " + rawStatus("127.0.0.1", adminPort, "GET /v1/subscriptions", null));
        }
        assertThat(answers).as("no token: 401, never 429").allMatch(answer -> answer.endsWith(" 401"));
        assertThat(rawStatus("127.0.0.1", adminPort, "GET /v1/subscriptions", TOKEN))
                .as("the right token after the unauthenticated flood")
                .isEqualTo(200);

        int otherPeerThrottled = 0;
        for (int i = 0; i < 40; i++) {
            if (rawStatus("127.0.0.2", adminPort, "GET /v1/subscriptions", "wrong-" + i + "-".repeat(32)) == 429) {
                otherPeerThrottled++;
            }
        }
        assertThat(otherPeerThrottled).as("127.0.0.2's wrong tokens throttled").isGreaterThanOrEqualTo(20);
        assertThat(rawStatus("127.0.0.1", adminPort, "GET /v1/subscriptions", TOKEN))
                .as("the right token from another address")
                .isEqualTo(200);
        assertThat(rawStatus("127.0.0.2", adminPort, "GET /v1/subscriptions", TOKEN))
                .as("the right token from the throttled address itself")
                .isEqualTo(200);

        String metrics = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + settle.httpPort() + "/metrics"))
                                .timeout(Duration.ofSeconds(3))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(metrics)
                .contains("settle_http_refused_total{port=\"admin\",reason=\"unauthenticated\"} 40.0")
                .contains("settle_http_refused_total{port=\"admin\",reason=\"throttled\"} " + otherPeerThrottled + ".0")
                .contains("settle_http_refused_total{port=\"admin\",reason=\"wrong_token\"} "
                        + (40 - otherPeerThrottled) + ".0");
    }

    @Test
    void aMalformedPercentEncodingInTheAdminPathIs400WithAOneLineReason() throws Exception {
        String answer = rawExchange("127.0.0.1", settle.adminPort().orElseThrow(), "GET /v1/subscriptions/%zz", TOKEN);

        // Before issue 40: 500, with the URLDecoder's stack trace in the log.
        assertThat(answer).startsWith("HTTP/1.1 400 ");
        String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
        assertThat(body.strip()).doesNotContain("\n", "Exception", "\tat ").contains("malformed percent-encoding");
    }

    /** The status of one request sent from {@code localAddress}, such as 127.0.0.2, a second loopback address. */
    private static int rawStatus(String localAddress, int port, String requestLine, String token) throws IOException {
        String answer = rawExchange(localAddress, port, requestLine, token);
        return Integer.parseInt(answer.substring(9, 12));
    }

    private static String rawExchange(String localAddress, int port, String requestLine, String token)
            throws IOException {
        try (Socket socket = new Socket()) {
            socket.bind(new InetSocketAddress(localAddress, 0));
            socket.connect(new InetSocketAddress("127.0.0.1", port), 3000);
            socket.setSoTimeout(5000);
            String head = requestLine + " HTTP/1.1\r\nHost: x\r\n"
                    + (token == null ? "" : "Authorization: Bearer " + token + "\r\n") + "\r\n";
            socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
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
                Waits.pause(Duration.ofMillis(200), "the trickle's pace: a byte every 200 ms");
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
