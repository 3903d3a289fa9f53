package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.manifest.HttpSettings;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HealthEndpointTest {
    private static final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final SettleMetrics metrics = new SettleMetrics();
    private final HealthEndpoint endpoint = start(metrics);

    @AfterEach
    void close() {
        endpoint.close();
    }

    @Test
    void aClientThatHangsUpBeforeTheAnswerIsLoggedInOneDebugLineWithoutAStack() throws Exception {
        ch.qos.logback.classic.Logger logger =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(HealthEndpoint.class);
        ch.qos.logback.classic.Level level = logger.getLevel();
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged = capture(logger);
        logger.setLevel(ch.qos.logback.classic.Level.DEBUG);
        try {
            // A probe that gives up resets the connection; whether the reset beats the answer is a race, so hang up
            // until one does.
            for (int attempt = 0; attempt < 200 && wentAway(logged) == 0; attempt++) {
                try (java.net.Socket socket = new java.net.Socket("127.0.0.1", endpoint.port())) {
                    socket.setSoLinger(true, 0);
                    socket.getOutputStream()
                            .write("GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n"
                                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                }
                Waits.pause(Duration.ofMillis(5), "the pace of the hang-ups, a race each");
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> wentAway(logged) > 0);
            assertThat(logged.list)
                    .as("nothing logged with a stack, nothing above debug")
                    .allMatch(event -> event.getThrowableProxy() == null
                            && event.getLevel() == ch.qos.logback.classic.Level.DEBUG);
        } finally {
            logger.detachAppender(logged);
            logger.setLevel(level);
        }
    }

    /** What {@code logger} logs from now on, until the appender is detached. */
    private static ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> capture(
            ch.qos.logback.classic.Logger logger) {
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
                new ch.qos.logback.core.read.ListAppender<>();
        // The endpoint's threads append while the test reads: the appender's own ArrayList is not safe for that.
        logged.list = new java.util.concurrent.CopyOnWriteArrayList<>();
        logged.start();
        logger.addAppender(logged);
        return logged;
    }

    private static long wentAway(
            ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged) {
        return logged.list.stream()
                .filter(event -> event.getFormattedMessage().contains("the client went away"))
                .count();
    }

    @Test
    void portZeroBindsAFreePort() {
        assertThat(endpoint.port()).isPositive();
        assertThat(get("/livez").statusCode()).isEqualTo(200);
    }

    @Test
    void twoEndpointsOnPortZeroInOneJvmServeTheirOwnRegistries() {
        SettleMetrics otherMetrics = new SettleMetrics();
        metrics.forSubscription("orders");
        otherMetrics.forSubscription("payments");
        try (HealthEndpoint other = start(otherMetrics)) {
            assertThat(other.port()).isNotEqualTo(endpoint.port());
            assertThat(get(endpoint, "/metrics").body())
                    .contains("settle_deliveries_total{subscription=\"orders\"}")
                    .doesNotContain("payments");
            assertThat(get(other, "/metrics").body())
                    .contains("settle_deliveries_total{subscription=\"payments\"}")
                    .doesNotContain("orders");
        }
    }

    @Test
    void aPortInUseIsRefusedNamingTheAddressAndTheManifestKeys() throws IOException {
        try (ServerSocket taken = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
            HttpSettings settings = new HttpSettings("127.0.0.1", taken.getLocalPort());
            assertThatThrownBy(() -> HealthEndpoint.start(settings, metrics))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("127.0.0.1:" + taken.getLocalPort())
                    .hasMessageContaining("http.port");
        }
    }

    @Test
    void metricsAreServedInTheTextExposition() {
        metrics.forSubscription("orders").delivered(1, 0);

        HttpResponse<String> response = get("/metrics");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("text/plain"));
        Exposition exposition = Exposition.parse(response.body());
        assertThat(exposition.value("settle_deliveries_total{subscription=\"orders\"}"))
                .isEqualTo(1);
        assertThat(exposition.value("settle_outcomes_total{subscription=\"orders\",outcome=\"refused\"}"))
                .isZero();
    }

    @Test
    void readyzIsUnavailableBeforeTheRuntimeHasStartedItsConsumers() {
        endpoint.watch(new FakeProbe("orders"));

        HttpResponse<String> response = get("/readyz");

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body()).isEqualTo("not ready: the handlers are still opening\n");
    }

    @Test
    void readyzIsOkOnceStartedWithEveryConsumerConnected() {
        endpoint.watch(new FakeProbe("orders"));
        endpoint.watch(new FakeProbe("payments"));

        endpoint.markStarted();
        HttpResponse<String> response = get("/readyz");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("ready: 2 subscriptions connected\n");
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
    }

    @Test
    void readyzStaysOkWithABreakerOpenAndSaysWhyInItsDetail() {
        endpoint.watch(new FakeProbe("orders")
                .breaker("breaker open (5 keys failed with a dependency's cause within 2s (5 of 5 calls), the last"
                        + " with java.net.ConnectException): receiving paused, 12 messages held without spending"
                        + " attempts"));
        endpoint.watch(new FakeProbe("payments"));
        endpoint.markStarted();

        HttpResponse<String> response = get("/readyz");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body())
                .isEqualTo("ready: 2 subscriptions connected\n"
                        + "subscription 'orders': breaker open (5 keys failed with a dependency's cause within 2s (5 of"
                        + " 5 calls), the last with java.net.ConnectException): receiving paused, 12 messages held"
                        + " without spending attempts\n");
    }

    @Test
    void readyzNamesEverySubscriptionWhoseConsumerIsNotConnected() {
        endpoint.watch(new FakeProbe("payments").disconnected());
        endpoint.watch(new FakeProbe("orders"));
        endpoint.watch(new FakeProbe("audit").disconnected());
        endpoint.markStarted();

        HttpResponse<String> response = get("/readyz");

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body()).isEqualTo("""
                subscription 'audit': consumer not connected to the broker
                subscription 'payments': consumer not connected to the broker
                """);
    }

    @Test
    void readyzTurnsUnavailableWhenTheDrainBeginsAndStaysSo() {
        endpoint.watch(new FakeProbe("orders"));
        endpoint.markStarted();
        assertThat(get("/readyz").statusCode()).isEqualTo(200);

        endpoint.markStopping();
        endpoint.markStarted();
        HttpResponse<String> response = get("/readyz");

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body()).isEqualTo("not ready: stopping\n");
    }

    @Test
    void readyzFollowsAConsumerThatReconnects() {
        FakeProbe orders = new FakeProbe("orders").disconnected();
        endpoint.watch(orders);
        endpoint.markStarted();
        assertThat(get("/readyz").statusCode()).isEqualTo(503);

        orders.connected = true;

        assertThat(get("/readyz").statusCode()).isEqualTo(200);
    }

    @Test
    void livezIsOkWhileEveryLoopIsAliveAndNoCallIsPastItsTimeout() {
        endpoint.watch(new FakeProbe("orders").running(Duration.ofSeconds(59)));
        endpoint.watch(new FakeProbe("payments").disconnected());

        HttpResponse<String> response = get("/livez");

        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("live: 2 subscriptions\n");
    }

    @Test
    void livezNamesTheSubscriptionWhoseEveryThreadIgnoresTheInterruptOfATimedOutCall() {
        endpoint.watch(
                new FakeProbe("orders").running(Duration.ofMillis(75_400)).stuck(2, 2));
        endpoint.watch(new FakeProbe("payments").running(Duration.ofSeconds(75)).stuck(3, 4));

        HttpResponse<String> response = get("/livez");

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body())
                .isEqualTo("subscription 'orders': 2 of its 2 handler threads ignore the interrupt of a call given up"
                        + " past handlerTimeout 1m (the longest has run 75.4 s): nothing more is handled\n");
    }

    @Test
    void aCallRunningPastHandlerTimeoutLeavesLivezGreen() {
        // Extended, or interrupted and about to come back: neither says the process is stuck.
        endpoint.watch(new FakeProbe("orders").running(Duration.ofMinutes(10)));

        assertThat(get("/livez").statusCode()).isEqualTo(200);
    }

    @Test
    void livezNamesTheSubscriptionWhoseReceiveLoopDied() {
        endpoint.watch(new FakeProbe("orders").died("java.lang.IllegalStateException: boom"));
        FakeProbe stuck =
                new FakeProbe("payments").running(Duration.ofSeconds(3)).stuck(1, 1);
        stuck.handlerTimeout = Duration.ofMillis(500);
        endpoint.watch(stuck);

        HttpResponse<String> response = get("/livez");

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.body()).isEqualTo("""
                subscription 'orders': receive loop died: java.lang.IllegalStateException: boom
                subscription 'payments': 1 of its 1 handler threads ignore the interrupt of a call given up past handlerTimeout 500ms (the longest has run 3 s): nothing more is handled
                """);
    }

    @Test
    void anUnwatchedSubscriptionNoLongerCounts() {
        endpoint.watch(new FakeProbe("orders").died("java.lang.Error: gone"));

        endpoint.unwatch("orders");

        assertThat(get("/livez").statusCode()).isEqualTo(200);
    }

    @Test
    void withoutProbeDetailTheBodiesAreABareWordAndTheDetailIsLogged() throws Exception {
        ch.qos.logback.classic.Logger logger =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(HealthEndpoint.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged = capture(logger);
        try (HealthEndpoint terse = HealthEndpoint.start(new HttpSettings("127.0.0.1", 0, false), metrics)) {
            terse.watch(new FakeProbe("orders").disconnected());
            terse.markStarted();

            HttpResponse<String> readyz = get(terse, "/readyz");
            get(terse, "/readyz");

            assertThat(readyz.statusCode()).isEqualTo(503);
            assertThat(readyz.body()).isEqualTo("not ready\n");
            assertThat(get(terse, "/livez").body()).isEqualTo("live\n");
            assertThat(logged.list)
                    .extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                    .filteredOn(message -> message.startsWith("/readyz"))
                    .as("the detail, logged once while it stays the same")
                    .containsExactly(
                            "/readyz answers 503: subscription 'orders': consumer not connected to the" + " broker");
        } finally {
            logger.detachAppender(logged);
        }
    }

    @Test
    void headAnswersWithTheStatusAndNoBody() throws Exception {
        endpoint.watch(new FakeProbe("orders").died("java.lang.Error: gone"));

        HttpResponse<String> livez = send(head("/livez"));
        HttpResponse<String> metricsHead = send(head("/metrics"));

        assertThat(livez.statusCode()).isEqualTo(503);
        assertThat(livez.body()).isEmpty();
        assertThat(metricsHead.statusCode()).isEqualTo(200);
        assertThat(metricsHead.body()).isEmpty();
    }

    @Test
    void anyOtherMethodIsNotAllowed() throws Exception {
        HttpResponse<String> response =
                send(HttpRequest.newBuilder(uri(endpoint, "/readyz")).POST(HttpRequest.BodyPublishers.ofString("x")));

        assertThat(response.statusCode()).isEqualTo(405);
        assertThat(response.headers().firstValue("Allow")).hasValue("GET, HEAD");
        assertThat(response.body()).isEqualTo("method POST not allowed: use GET or HEAD\n");
    }

    @Test
    void anUnknownPathIsNotFound() {
        HttpResponse<String> response = get("/metricsx");

        assertThat(response.statusCode()).isEqualTo(404);
        assertThat(response.body()).endsWith("\n");
    }

    @Test
    void closingTwiceIsHarmlessAndFreesThePort() throws IOException {
        int port = endpoint.port();

        endpoint.close();
        endpoint.close();

        try (ServerSocket rebound = new ServerSocket(port, 50, java.net.InetAddress.getByName("127.0.0.1"))) {
            assertThat(rebound.getLocalPort()).isEqualTo(port);
        }
    }

    private static HealthEndpoint start(SettleMetrics metrics) {
        try {
            return HealthEndpoint.start(new HttpSettings("127.0.0.1", 0), metrics);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private HttpRequest.Builder head(String path) {
        return HttpRequest.newBuilder(uri(endpoint, path)).method("HEAD", HttpRequest.BodyPublishers.noBody());
    }

    private HttpResponse<String> get(String path) {
        return get(endpoint, path);
    }

    private static HttpResponse<String> get(HealthEndpoint endpoint, String path) {
        try {
            return send(HttpRequest.newBuilder(uri(endpoint, path)).GET());
        } catch (Exception e) {
            throw new AssertionError("GET " + path + " failed", e);
        }
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return http.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(HealthEndpoint endpoint, String path) {
        return URI.create("http://127.0.0.1:" + endpoint.port() + path);
    }
}
