package dev.settle.runtime.admin;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.settle.runtime.live.Deployed;
import dev.settle.runtime.live.GenerationRecord;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.live.SubscriptionStatus;
import dev.settle.runtime.live.SwapRefusedException;
import dev.settle.runtime.manifest.AdminSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin API: {@code PUT /v1/subscriptions/{name}/jar}, {@code POST /v1/subscriptions/{name}/rollback},
 * {@code GET /v1/subscriptions[/{name}]}. Every request needs {@code Authorization: Bearer <token>}, compared in
 * constant time; a request without it is answered 401 before anything else is looked at. Answers are JSON. The API
 * takes bytes only: it never fetches a URL a caller supplies.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    private static final String PREFIX = "/v1/subscriptions";

    private final HttpServer server;
    private final ExecutorService executor;
    private final LiveCode live;
    private final byte[] expected;
    private final long maxJarSize;

    private AdminServer(HttpServer server, ExecutorService executor, LiveCode live, AdminSettings settings) {
        this.server = server;
        this.executor = executor;
        this.live = live;
        this.expected = ("Bearer " + settings.token().reveal()).getBytes(StandardCharsets.UTF_8);
        this.maxJarSize = settings.maxJarSize();
    }

    /**
     * Binds the admin port and serves.
     *
     * @throws IOException when the port cannot be bound
     */
    public static AdminServer start(AdminSettings settings, LiveCode live) throws IOException {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(settings.bindAddress(), settings.port()), 0);
        } catch (IOException e) {
            throw new IOException(
                    "cannot serve the admin API on " + settings.bindAddress() + ":" + settings.port() + ": " + e
                            + "; change admin.port or admin.bindAddress",
                    e);
        }
        AtomicInteger threads = new AtomicInteger();
        // Two threads: a status request is answered while an upload waits for its swap.
        ExecutorService executor = Executors.newFixedThreadPool(2, runnable -> {
            Thread thread = new Thread(runnable, "settle-admin-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        AdminServer admin = new AdminServer(server, executor, live, settings);
        server.setExecutor(executor);
        server.createContext("/", admin::serve);
        server.start();
        log.info(
                "admin API on {}:{} (bearer token required; uploads up to {} bytes)",
                settings.bindAddress(),
                admin.port(),
                settings.maxJarSize());
        return admin;
    }

    /** The bound port (the real one, when the manifest says 0). */
    public int port() {
        return server.getAddress().getPort();
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!authorized(exchange)) {
                exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
                answer(exchange, 401, error("missing or wrong bearer token; send Authorization: Bearer <token>"));
                return;
            }
            route(exchange);
        } catch (IOException | RuntimeException e) {
            log.error("admin API: {} {} failed", exchange.getRequestMethod(), exchange.getRequestURI(), e);
            try {
                answer(exchange, 500, error("internal error: " + e));
            } catch (IOException | RuntimeException ignored) {
                // The answer may have been started already.
            }
        }
    }

    private boolean authorized(HttpExchange exchange) {
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        // MessageDigest.isEqual takes time independent of where the first difference is.
        return header != null && MessageDigest.isEqual(header.getBytes(StandardCharsets.UTF_8), expected);
    }

    private void route(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        if (!path.equals(PREFIX) && !path.startsWith(PREFIX + "/")) {
            answer(exchange, 404, error("no such resource; the API is under " + PREFIX));
            return;
        }
        List<String> parts = path.length() <= PREFIX.length()
                ? List.of()
                : List.of(path.substring(PREFIX.length() + 1).split("/", -1)).stream()
                        .map(part -> URLDecoder.decode(part, StandardCharsets.UTF_8))
                        .toList();
        if (parts.isEmpty()) {
            expect(exchange, "GET", () -> answer(exchange, 200, Map.of("subscriptions", statuses())));
        } else if (parts.size() == 1) {
            expect(exchange, "GET", () -> status(exchange, parts.get(0)));
        } else if (parts.size() == 2 && parts.get(1).equals("jar")) {
            expect(exchange, "PUT", () -> upload(exchange, parts.get(0)));
        } else if (parts.size() == 2 && parts.get(1).equals("rollback")) {
            expect(exchange, "POST", () -> rollback(exchange, parts.get(0)));
        } else {
            answer(exchange, 404, error("no such resource: " + path));
        }
    }

    private interface Action {
        void run() throws IOException;
    }

    private static void expect(HttpExchange exchange, String method, Action action) throws IOException {
        if (!exchange.getRequestMethod().equals(method)) {
            exchange.getResponseHeaders().set("Allow", method);
            answer(exchange, 405, error(exchange.getRequestMethod() + " is not allowed here; use " + method));
            return;
        }
        action.run();
    }

    private List<Object> statuses() {
        return live.status().stream()
                .map(AdminServer::json)
                .map(Object.class::cast)
                .toList();
    }

    private void status(HttpExchange exchange, String subscription) throws IOException {
        var status = live.status(subscription);
        if (status.isEmpty()) {
            answer(exchange, 404, error("no subscription '" + subscription + "'"));
            return;
        }
        answer(exchange, 200, json(status.get()));
    }

    private void upload(HttpExchange exchange, String subscription) throws IOException {
        if (live.status(subscription).isEmpty()) {
            answer(exchange, 404, error("no subscription '" + subscription + "'"));
            return;
        }
        String length = exchange.getRequestHeaders().getFirst("Content-Length");
        if (length != null && parseLength(length) > maxJarSize) {
            // Refused on the header alone: the body is never stored or looked at.
            refuseTooLarge(exchange);
            return;
        }
        Path staged = live.stagingFile(subscription);
        String sha256;
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            long received = copy(new DigestInputStream(exchange.getRequestBody(), digest), staged);
            if (received > maxJarSize) {
                Files.deleteIfExists(staged);
                refuseTooLarge(exchange);
                return;
            }
            sha256 = HexFormat.of().formatHex(digest.digest());
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(staged);
            throw e;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        try {
            answer(exchange, 200, json(live.deploy(subscription, staged, sha256)));
        } catch (SwapRefusedException refused) {
            answer(exchange, refused.reason() == SwapRefusedException.Reason.INVALID ? 400 : 409, error(refused));
        } finally {
            Files.deleteIfExists(staged);
        }
    }

    private void rollback(HttpExchange exchange, String subscription) throws IOException {
        try {
            answer(exchange, 200, json(live.rollback(subscription)));
        } catch (NoSuchElementException e) {
            answer(exchange, 404, error("no subscription '" + subscription + "'"));
        } catch (SwapRefusedException refused) {
            answer(exchange, refused.reason() == SwapRefusedException.Reason.INVALID ? 400 : 409, error(refused));
        }
    }

    /** Copies at most one byte past the limit: enough to know the body is too large, no more. */
    private long copy(InputStream body, Path target) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        long total = 0;
        try (OutputStream out = Files.newOutputStream(target)) {
            while (total <= maxJarSize) {
                int read = body.read(buffer, 0, (int) Math.min(buffer.length, maxJarSize + 1 - total));
                if (read < 0) {
                    break;
                }
                out.write(buffer, 0, read);
                total += read;
            }
        }
        return total;
    }

    /**
     * 413, and the connection closed after it. Up to {@link #DISCARDED} bytes of the body are read and thrown
     * away first, unlooked at: closing a socket with unread bytes makes TCP reset it, and a reset can reach the
     * client before the answer does, so a client that is still sending would see "connection reset" instead of
     * the 413. A longer body is cut off there.
     */
    private void refuseTooLarge(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().set("Connection", "close");
        answer(exchange, 413, tooLarge());
        InputStream body = exchange.getRequestBody();
        byte[] buffer = new byte[16 * 1024];
        long discarded = 0;
        try {
            while (discarded < DISCARDED) {
                int read = body.read(buffer);
                if (read < 0) {
                    break;
                }
                discarded += read;
            }
        } catch (IOException e) {
            // The client gave up: nothing more to do.
        }
    }

    private static final long DISCARDED = 1024 * 1024;

    private static long parseLength(String header) {
        try {
            return Long.parseLong(header.strip());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private Map<String, Object> tooLarge() {
        return error("the JAR is larger than admin.maxJarSize (" + maxJarSize + " bytes); raise it in the manifest"
                + " or upload a smaller JAR");
    }

    private static Map<String, Object> error(String message) {
        return Map.of("error", message);
    }

    private static Map<String, Object> error(SwapRefusedException refused) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "refused; the running generation is untouched");
        body.put("problems", refused.problems());
        return body;
    }

    private static Map<String, Object> json(Deployed deployed) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("subscription", deployed.subscription());
        body.put("generation", deployed.generation());
        body.put("sha256", deployed.sha256());
        body.put("handler", deployed.handler());
        body.put("previousSha256", deployed.previousSha256());
        body.put("swapMillis", deployed.swapMillis());
        return body;
    }

    private static Map<String, Object> json(SubscriptionStatus status) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("subscription", status.subscription());
        body.put("generation", status.active().number());
        body.put("sha256", status.active().sha256());
        body.put("handler", status.active().handler());
        body.put("source", status.active().source().name().toLowerCase(java.util.Locale.ROOT));
        body.put("activeSince", status.active().activatedAt().toString());
        body.put("kept", status.kept().stream().map(AdminServer::json).toList());
        return body;
    }

    private static Map<String, Object> json(GenerationRecord generation) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("generation", generation.number());
        body.put("sha256", generation.sha256());
        body.put("handler", generation.handler());
        body.put("source", generation.source().name().toLowerCase(java.util.Locale.ROOT));
        body.put("activatedAt", generation.activatedAt().toString());
        return body;
    }

    private static void answer(HttpExchange exchange, int status, Object body) throws IOException {
        byte[] bytes = (Json.write(body) + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /**
     * Stops serving: no new request is taken; one under way runs to its end (a swap is done, or not begun, before
     * the runtime stops its drivers), though its answer may not reach the client.
     */
    @Override
    public void close() {
        server.stop(0);
        executor.shutdown();
        try {
            if (!executor.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES)) {
                log.warn("admin API: a request still runs a minute after the stop began; stopping without it");
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            executor.shutdownNow();
        }
    }
}
