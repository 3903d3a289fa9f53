package dev.settle.runtime.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class JettyServiceTest {
    /**
     * Small on purpose: a 1 s head deadline, 64-byte heads, one worker and one waiting request, and an unread body
     * read away for 3 s at most (10 s by default: the test of that wait took 10 s of the runtime module's build).
     */
    private static final Limits LIMITS =
            new Limits(Duration.ofSeconds(1), 64 * 4, 8, 1, 1, Duration.ofSeconds(2), 1, 8, Duration.ofSeconds(3));

    private final CountDownLatch release = new CountDownLatch(1);
    private final Map<Refusals.Reason, Integer> refused = new ConcurrentHashMap<>();
    private JettyService service;

    @AfterEach
    void close() {
        release.countDown();
        service.close();
    }

    private void start(Handler handler) throws IOException {
        service = JettyService.start(
                "test",
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                LIMITS,
                Set.of("/livez"),
                handler,
                new Refusals(
                        "test",
                        LoggerFactory.getLogger(JettyServiceTest.class),
                        reason -> refused.merge(reason, 1, Integer::sum)),
                LoggerFactory.getLogger(JettyServiceTest.class));
    }

    @Test
    void announcedBodiesThatNeverComeHoldNoWorker() throws Exception {
        AtomicInteger handled = new AtomicInteger();
        start(request -> {
            handled.incrementAndGet();
            return Response.text(200, "fine\n");
        });
        List<Socket> silent = new ArrayList<>();
        try {
            // Twenty answers waiting at once for bodies that never come (each until the client has been quiet for
            // UnreadBody.QUIET). Before issue 40 each held the one worker for 2 s, reading its body away: the third
            // found the worker busy and the queue full, and was answered 503.
            for (int i = 0; i < 20; i++) {
                Socket socket = connect();
                silent.add(socket);
                send(socket, "GET /a HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n");
                int before = i;
                Waits.until("request " + i + " handled", Duration.ofSeconds(10), handled::get, n -> n > before);
            }
            long began = System.nanoTime();
            assertThat(exchange("GET /b HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(3));
            for (Socket socket : silent) {
                socket.setSoTimeout(10_000);
                assertThat(readUntil(socket.getInputStream(), "fine\n")).startsWith("HTTP/1.1 200 ");
            }
        } finally {
            for (Socket socket : silent) {
                socket.close();
            }
        }
    }

    @Test
    void aClientWaitingToBeToldToSendItsBodyIsAnsweredAtOnceWhenItIsNotRead() throws Exception {
        start(request -> Response.text(413, "too large\n"));
        try (Socket socket = connect()) {
            long began = System.nanoTime();
            send(socket, "PUT /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\n\r\n");
            socket.setSoTimeout(5000);
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            // No "100 Continue" first, and no wait for a body the client was never asked for.
            assertThat(answer).startsWith("HTTP/1.1 413 ").endsWith("too large\n");
            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(UnreadBody.QUIET);
        }
    }

    @Test
    void anAnsweredConnectionWhoseBodyNeverComesIsClosedAfterTheDiscardTime() throws Exception {
        start(request -> Response.text(200, "fine\n"));
        try (Socket socket = connect()) {
            send(socket, "GET /a HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n");
            socket.setSoTimeout(10_000);
            assertThat(readUntil(socket.getInputStream(), "fine\n")).startsWith("HTTP/1.1 200 ");
            long began = System.nanoTime();
            socket.getOutputStream().write(new byte[1000]);

            // The answer's end came with a half-close; the server reads on, then closes. Writing then fails or the
            // read sees the end: either way the server let go.
            assertThat(closedByServer(socket)).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - began))
                    .isLessThan(LIMITS.idleTimeout().plusSeconds(3));
        }
    }

    @Test
    void aProbePathIsAnsweredWhileTheWorkerIsBusyAndTheQueueFull() throws Exception {
        CountDownLatch busy = new CountDownLatch(1);
        start(request -> {
            if (request.rawPath().equals("/livez")) {
                return Response.text(200, "live\n");
            }
            busy.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Response.text(200, "late\n");
        });
        try (Socket first = connect();
                Socket second = connect()) {
            send(first, "GET /metrics HTTP/1.1\r\n\r\n");
            assertThat(busy.await(5, TimeUnit.SECONDS)).isTrue();
            send(second, "GET /metrics HTTP/1.1\r\n\r\n");
            // The second waits in the queue once the selector has read its head (a fixed pause lost that race under
            // load: the third took the slot). Then a third finds no room, and a probe its own worker.
            Waits.until("the second request in the queue", Duration.ofSeconds(30), service::waiting, n -> n == 1);
            assertThat(exchange("GET /metrics HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 503 ");

            long began = System.nanoTime();
            assertThat(exchange("GET /livez?verbose HTTP/1.1\r\n\r\n"))
                    .startsWith("HTTP/1.1 200 ")
                    .endsWith("live\n");
            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(3));
        }
        assertThat(refused).containsEntry(Refusals.Reason.BUSY, 1);
    }

    @Test
    void malformedAndTooSlowRequestsAreCountedAsRefused() throws Exception {
        start(request -> Response.text(200, "fine\n"));
        assertThat(exchange("GET x HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 400 ");
        assertThat(exchange("GET /x HTTP/1.1\r\nX-Long: " + "a".repeat(400) + "\r\n\r\n"))
                .startsWith("HTTP/1.1 431 ");
        try (Socket socket = connect()) {
            send(socket, "GE");
            socket.setSoTimeout(5000);
            assertThat(socket.getInputStream().read()).isEqualTo(-1);
        }

        // The slow one is counted as its connection closes, which the client can see first (a full build read the
        // map before the count: {MALFORMED=2}).
        Waits.until(
                "the request too slow to finish its head counted",
                Duration.ofSeconds(10),
                () -> Map.copyOf(refused),
                counted -> counted.containsKey(Refusals.Reason.TOO_SLOW));
        assertThat(refused).containsEntry(Refusals.Reason.MALFORMED, 2).containsEntry(Refusals.Reason.TOO_SLOW, 1);
    }

    @Test
    void aFailingHandlerIsAnswered500WithoutItsStackTrace() throws Exception {
        start(request -> {
            throw new IllegalStateException("a bug deep inside");
        });

        assertThat(exchange("GET /x HTTP/1.1\r\n\r\n"))
                .startsWith("HTTP/1.1 500 ")
                .doesNotContain("IllegalStateException", "a bug deep inside", "\tat ");
    }

    @Test
    void aChunkedBodyIsDecodedAndAnExpectContinueIsAnswered() throws Exception {
        start(request -> Response.text(200, new String(request.body().readAllBytes(), StandardCharsets.UTF_8)));
        try (Socket socket = connect()) {
            send(socket, "PUT /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n");
            socket.setSoTimeout(2000);
            assertThat(readUntil(socket.getInputStream(), "\r\n\r\n")).startsWith("HTTP/1.1 100 Continue");
            send(socket, "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n");

            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer)
                    .startsWith("HTTP/1.1 200 OK\r\n")
                    .contains("Connection: close")
                    .endsWith("hello world");
        }
    }

    @Test
    void aHeadOverTheLimitIs431AndAMalformedOneIs400() throws Exception {
        start(request -> Response.text(200, "fine\n"));

        assertThat(exchange("GET /x HTTP/1.1\r\nX-Long: " + "a".repeat(400) + "\r\n\r\n"))
                .startsWith("HTTP/1.1 431 ");
        assertThat(exchange("GET x HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 400 ");
        assertThat(exchange("GET /x HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"))
                .startsWith("HTTP/1.1 400 ");
        assertThat(exchange("GET /x HTTP/1.1\r\n\r\n"))
                .startsWith("HTTP/1.1 200 ")
                .endsWith("fine\n");
    }

    @Test
    void aSilentConnectionIsDroppedAtTheHeadDeadlineWithoutAnAnswer() throws Exception {
        start(request -> Response.text(200, "fine\n"));
        try (Socket socket = connect()) {
            send(socket, "GE");
            socket.setSoTimeout(10_000);
            long began = System.nanoTime();

            // The deadline is 1 s; a unit-test build under load once took 3.04 s to drop it, so the bound is 6 s:
            // still far from "held until the client gives up".
            assertThat(socket.getInputStream().read()).isEqualTo(-1);
            assertThat(Duration.ofNanos(System.nanoTime() - began))
                    .isBetween(Duration.ofMillis(500), Duration.ofSeconds(6));
        }
        // Counted as the connection closes, which the client can see first.
        Waits.until("the dropped connection counted", Duration.ofSeconds(10), service::dropped, n -> n >= 1);
        assertThat(service.dropped()).isEqualTo(1);
    }

    @Test
    void withTheWorkerBusyAndTheQueueFullAnotherRequestIs503AtOnce() throws Exception {
        CountDownLatch busy = new CountDownLatch(1);
        start(request -> {
            busy.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Response.text(200, "late\n");
        });
        try (Socket first = connect();
                Socket second = connect()) {
            send(first, "GET /a HTTP/1.1\r\n\r\n");
            assertThat(busy.await(5, TimeUnit.SECONDS)).isTrue();
            send(second, "GET /b HTTP/1.1\r\n\r\n");
            // The second waits in the queue once the selector has read its head (a fixed pause lost that race under
            // load: the third took the slot and waited). Then the third finds no room.
            Waits.until("the second request in the queue", Duration.ofSeconds(30), service::waiting, n -> n == 1);

            long began = System.nanoTime();
            assertThat(exchange("GET /c HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 503 ");
            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(3));
        }
    }

    @Test
    void aMalformedPercentEncodingIsRefused400WithItsReasonAndCounted() throws Exception {
        start(request -> Response.text(200, "fine\n"));

        // Jetty refuses it while parsing the request line, before any handler; the answer still names the reason.
        assertThat(exchange("GET /v1/subscriptions/%zz HTTP/1.1\r\n\r\n"))
                .startsWith("HTTP/1.1 400 ")
                .endsWith("\r\n\r\nmalformed percent-encoding in the path: a '%' must be followed by two hex digits"
                        + " (send a '%' itself as %25)\n");
        assertThat(refused).containsEntry(Refusals.Reason.MALFORMED, 1);
    }

    @Test
    void everyThreadTheServerStartsIsADaemon() throws Exception {
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        start(request -> Response.text(200, "fine\n"));
        assertThat(exchange("GET /livez HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
        assertThat(exchange("GET /x HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");

        // A runtime that fails to stop its ports must still exit (and HealthEndpoint promises daemon threads).
        assertThat(Thread.getAllStackTraces().keySet())
                .filteredOn(thread -> !before.contains(thread) && thread.isAlive())
                .isNotEmpty()
                .allSatisfy(thread ->
                        assertThat(thread.isDaemon()).as(thread.getName()).isTrue());
    }

    @Test
    void aHeadOfABlankLineAloneIsDroppedAtTheHeadDeadlineAndThePortGoesOnAnswering() throws Exception {
        start(request -> Response.text(200, "fine\n"));

        // Once, this ended the hand-written server's selector thread and with it the port: any client could stop the
        // probes. Jetty skips empty lines before a request line (RFC 9112 §2.2), so these wait for one, in vain,
        // until the head deadline drops them without an answer.
        assertThat(exchange("\r\n\r\n")).isEmpty();
        assertThat(exchange("\n\n")).isEmpty();
        assertThat(exchange("GET /x HTTP/1.1\r\n\r\n"))
                .startsWith("HTTP/1.1 200 ")
                .endsWith("fine\n");
    }

    @Test
    void aBodyTrickledAfterItsAnswerDoesNotHoldTheWorker() throws Exception {
        start(request -> Response.text(200, "fine\n"));
        try (Socket trickling = connect()) {
            send(trickling, "GET /a HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n");
            trickling.setSoTimeout(5000);
            assertThat(readUntil(trickling.getInputStream(), "fine\n")).startsWith("HTTP/1.1 200 ");
            long began = System.nanoTime();
            // One byte every 200 ms after the answer, each well inside the per-read wait: the body is Jetty's to
            // drop now, and the one worker answers the next request. (Before issue 40 a worker read such a body
            // away, and was held for as long as the bytes kept coming.)
            Thread trickle = trickle(trickling, 100, Duration.ofMillis(200));

            assertThat(exchange("GET /b HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
            assertThat(Duration.ofNanos(System.nanoTime() - began))
                    .isLessThan(LIMITS.idleTimeout().plusSeconds(3));
            trickle.interrupt();
        }
    }

    @Test
    void aBodyTricklingInBeforeItsAnswerIsReadAwayForNoLongerThanTheLongestWait() throws Exception {
        start(request -> Response.text(200, "fine\n"));
        try (Socket trickling = connect()) {
            long began = System.nanoTime();
            send(trickling, "GET /a HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n");
            // A byte every 100 ms, well inside UnreadBody.QUIET: only the longest wait ends the reading.
            Thread trickle = trickle(trickling, 300, Duration.ofMillis(100));

            // The bytes are read on Jetty's threads: the one worker answers meanwhile.
            assertThat(exchange("GET /b HTTP/1.1\r\n\r\n")).startsWith("HTTP/1.1 200 ");
            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(3));

            trickling.setSoTimeout(30_000);
            assertThat(readUntil(trickling.getInputStream(), "fine\n")).startsWith("HTTP/1.1 200 ");
            Duration answeredAfter = Duration.ofNanos(System.nanoTime() - began);
            // Not at the first pause (the bytes kept coming), and not for the whole 30 s trickle.
            assertThat(answeredAfter)
                    .isGreaterThan(LIMITS.unreadBodyLongest().dividedBy(2))
                    .isLessThan(LIMITS.unreadBodyLongest().plusSeconds(5));
            trickle.interrupt();
        }
    }

    /** A started daemon thread that sends {@code bytes} bytes on {@code socket}, one every {@code pace}. */
    private static Thread trickle(Socket socket, int bytes, Duration pace) {
        Thread trickle = new Thread(() -> {
            try {
                for (int i = 0; i < bytes; i++) {
                    send(socket, "x");
                    Waits.pause(pace, "the trickle's pace: a byte at a time");
                }
            } catch (IOException | InterruptedException e) {
                // Dropped by the server once it has answered.
            }
        });
        trickle.setDaemon(true);
        trickle.start();
        return trickle;
    }

    @Test
    void aBodyRefusedUnreadStillLetsAClientThatKeepsSendingReadTheRefusal() throws Exception {
        // An upload refused on its Content-Length alone: the JDK client goes on writing the body while the answer
        // comes back. Were the connection reset with the body unread, it would see a broken pipe, not the 413.
        start(request -> Response.text(413, "too large\n"));
        HttpClient client = HttpClient.newHttpClient();
        for (int size : new int[] {64 * 1024, 1024 * 1024, 8 * 1024 * 1024}) {
            for (int i = 0; i < 20; i++) {
                HttpResponse<String> answer = client.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.port() + "/upload"))
                                .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[size]))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(answer.statusCode()).as(size + " bytes, upload " + i).isEqualTo(413);
            }
        }
    }

    /** Writes until the server's close shows, within 10 s of read timeouts: true once it has. */
    private static boolean closedByServer(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        try {
            while (true) {
                if (in.read() < 0) {
                    // The answer is read; the half-close is seen. Writing more must fail once the server closes.
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (System.nanoTime() < deadline) {
                        socket.getOutputStream().write(new byte[1000]);
                        socket.getOutputStream().flush();
                        // The reset shows on a write after the close.
                        Waits.pause(Duration.ofMillis(50), "a write's pace");
                    }
                    return false;
                }
            }
        } catch (IOException | InterruptedException e) {
            return true;
        }
    }

    private Socket connect() throws IOException {
        return new Socket(InetAddress.getLoopbackAddress(), service.port());
    }

    private String exchange(String request) throws IOException {
        try (Socket socket = connect()) {
            socket.setSoTimeout(5000);
            send(socket, request);
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static void send(Socket socket, String text) throws IOException {
        // An HTTP/1.1 request without Host is 400 (RFC 9112 §3.2), as every real client (kubelet, Prometheus, curl)
        // knows: each request line here gets one.
        if (!text.contains("\r\nHost: ")) {
            text = text.replaceFirst(" HTTP/1\\.1\r\n", " HTTP/1.1\r\nHost: x\r\n");
        }
        socket.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
    }

    private static String readUntil(InputStream in, String end) throws IOException {
        StringBuilder read = new StringBuilder();
        while (!read.toString().endsWith(end)) {
            int next = in.read();
            if (next < 0) {
                break;
            }
            read.append((char) next);
        }
        return read.toString();
    }
}
