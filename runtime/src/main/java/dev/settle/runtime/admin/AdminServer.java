package dev.settle.runtime.admin;

import static dev.settle.runtime.admin.AdminJson.answer;
import static dev.settle.runtime.admin.AdminJson.error;

import dev.settle.runtime.canary.Thresholds;
import dev.settle.runtime.http.JettyService;
import dev.settle.runtime.http.Limits;
import dev.settle.runtime.http.Refusals;
import dev.settle.runtime.http.Request;
import dev.settle.runtime.http.Response;
import dev.settle.runtime.live.Deployed;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.live.SubscriptionStatus;
import dev.settle.runtime.live.SwapRefusedException;
import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.DurationText;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin API: {@code PUT /v1/subscriptions/{name}/jar}, {@code POST /v1/subscriptions/{name}/rollback},
 * {@code GET /v1/subscriptions[/{name}]}. Every request needs {@code Authorization: Bearer <token>}, compared in
 * constant time; a request without it is answered 401 before anything else is looked at. The right token is always
 * served; a peer address that sent ten wrong tokens gets 429 for its wrong ones, one a second allowed
 * ({@link WrongTokens}). Every refusal is counted and logged through {@link Refusals}. Answers are JSON, a refusal's
 * a one-line reason, never a stack trace. The API takes bytes only: it never fetches a URL a caller supplies.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);
    private static final String PREFIX = "/v1/subscriptions";
    /** What the live consumers, producers and client run with, read from the client's objects; no credential. */
    private static final String EFFECTIVE = "/config/effective";

    private JettyService server;
    private final LiveCode live;
    private final byte[] expected;
    private final long maxJarSize;
    private final WrongTokens wrongTokens = new WrongTokens(System::nanoTime);
    private final Refusals refusals;
    private final Supplier<Map<String, Object>> effective;
    /** A running subscription's outage circuit breaker, by name, for its status; empty when unknown. */
    private final Function<String, Optional<Map<String, Object>>> breakers;
    /** The running Pulsar Functions' subscriptions, each with its class: listed with their breaker alone. */
    private final Supplier<Map<String, String>> functions;

    /**
     * What the API answers from, each read when a request asks.
     *
     * @param live the subscriptions' kept generations: deploys, rollbacks, canary ramps and their status
     * @param effective what the live consumers, producers and client run with ({@code /config/effective})
     * @param breakers a running subscription's outage circuit breaker, by name, for its status; empty when unknown
     * @param functions the running Pulsar Functions' subscriptions (name to the function's class), which keep no
     *     generations: listed with their breaker alone
     */
    public record Sources(
            LiveCode live,
            Supplier<Map<String, Object>> effective,
            Function<String, Optional<Map<String, Object>>> breakers,
            Supplier<Map<String, String>> functions) {
        public Sources {
            Objects.requireNonNull(live, "live");
            Objects.requireNonNull(effective, "effective");
            Objects.requireNonNull(breakers, "breakers");
            Objects.requireNonNull(functions, "functions");
        }
    }

    private AdminServer(AdminSettings settings, Sources sources, Refusals refusals) {
        this.live = sources.live();
        this.breakers = sources.breakers();
        this.functions = sources.functions();
        this.effective = sources.effective();
        this.refusals = refusals;
        this.expected = ("Bearer " + settings.token().reveal()).getBytes(StandardCharsets.UTF_8);
        this.maxJarSize = settings.maxJarSize();
    }

    /**
     * Binds the admin port of {@code settings} (its address, token and upload limit, as the manifest's {@code admin:}
     * section says) and serves what {@code sources} answer; each refused request passes its reason's label
     * ({@code wrong_token}, ...) to {@code refused}, the metric.
     *
     * @throws IOException when the port cannot be bound
     */
    public static AdminServer start(AdminSettings settings, Sources sources, Consumer<String> refused)
            throws IOException {
        AdminServer admin = new AdminServer(
                settings, sources, new Refusals("admin", log, reason -> refused.accept(reason.label())));
        try {
            // Its own workers (Limits.admin()), apart from the probe port's: an upload waiting for its swap holds
            // one, status requests get the others, and a client without the token is answered from its head alone,
            // its unread body never waited for.
            admin.server = JettyService.start(
                    "admin",
                    new InetSocketAddress(settings.bindAddress(), settings.port()),
                    Limits.admin(),
                    Set.of(),
                    admin::serve,
                    admin.refusals,
                    log);
        } catch (IOException e) {
            throw new IOException(
                    "cannot serve the admin API on " + settings.bindAddress() + ":" + settings.port() + ": " + e
                            + "; change admin.port or admin.bindAddress",
                    e);
        }
        log.info(
                "admin API on {}:{} (bearer token required; uploads up to {} bytes)",
                settings.bindAddress(),
                admin.port(),
                settings.maxJarSize());
        return admin;
    }

    /** The bound port (the real one, when the manifest says 0). */
    public int port() {
        return server.port();
    }

    private Response serve(Request request) throws IOException {
        String header = request.header("Authorization").orElse("");
        // MessageDigest.isEqual takes time independent of where the first difference is.
        if (MessageDigest.isEqual(header.getBytes(StandardCharsets.UTF_8), expected)) {
            // First: the right token is never held back by what others, or this peer, got wrong.
            return route(request);
        }
        if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            // No token at all: refused without spending any peer's bucket.
            refusals.refused(Refusals.Reason.UNAUTHENTICATED, request.peer());
            return unauthorized("missing bearer token; send Authorization: Bearer <token>");
        }
        long wait = wrongTokens.secondsToWait(request.peer());
        if (wait > 0) {
            refusals.refused(Refusals.Reason.THROTTLED, request.peer());
            return answer(429, error("too many wrong tokens from this address; try again in " + wait + " s"))
                    .with("Retry-After", Long.toString(wait));
        }
        wrongTokens.wrong(request.peer());
        refusals.refused(Refusals.Reason.WRONG_TOKEN, request.peer());
        return unauthorized("wrong bearer token; send Authorization: Bearer <token> with admin.token's value");
    }

    private static Response unauthorized(String reason) {
        return answer(401, error(reason)).with("WWW-Authenticate", "Bearer");
    }

    private Response route(Request request) throws IOException {
        String path = request.rawPath();
        if (path.equals(EFFECTIVE)) {
            return expect(request, "GET", () -> answer(200, effective.get()));
        }
        if (!path.equals(PREFIX) && !path.startsWith(PREFIX + "/")) {
            return answer(404, error("no such resource; the API is under " + PREFIX));
        }
        List<String> parts;
        try {
            parts = path.length() <= PREFIX.length()
                    ? List.of()
                    : List.of(path.substring(PREFIX.length() + 1).split("/", -1)).stream()
                            // Percent-decoding of a path: '+' is a plus there, a space only in a form's query.
                            .map(part -> URLDecoder.decode(part.replace("+", "%2B"), StandardCharsets.UTF_8))
                            .toList();
        } catch (IllegalArgumentException e) {
            // A '%' not followed by two hex digits (issue 40: it answered 500 and logged a stack trace).
            refusals.refused(Refusals.Reason.MALFORMED, request.peer());
            return answer(
                    400,
                    error("malformed percent-encoding in the path: a '%' must be followed by two hex"
                            + " digits (send a '%' itself as %25)"));
        }
        if (parts.isEmpty()) {
            return expect(request, "GET", () -> answer(200, Map.of("subscriptions", statuses())));
        } else if (parts.size() == 1) {
            return expect(request, "GET", () -> status(parts.get(0)));
        } else if (parts.size() == 2 && parts.get(1).equals("jar")) {
            return expect(request, "PUT", () -> upload(request, parts.get(0)));
        } else if (parts.size() == 2 && parts.get(1).equals("rollback")) {
            return expect(request, "POST", () -> rollback(parts.get(0)));
        } else if (parts.size() == 2 && parts.get(1).equals("canary")) {
            return expect(request, "POST", () -> canary(request, parts.get(0)));
        } else if (parts.size() == 3 && parts.get(1).equals("canary")) {
            LiveCode.RampCommand command = switch (parts.get(2)) {
                case "promote" -> LiveCode.RampCommand.PROMOTE;
                case "abort" -> LiveCode.RampCommand.ABORT;
                case "step" -> LiveCode.RampCommand.STEP;
                default -> null;
            };
            if (command != null) {
                return expect(request, "POST", () -> rampCommand(parts.get(0), command));
            }
        }
        return answer(404, error("no such resource: " + path));
    }

    private interface Action {
        Response run() throws IOException;
    }

    private static Response expect(Request request, String method, Action action) throws IOException {
        if (!request.method().equals(method)) {
            return answer(405, error(request.method() + " is not allowed here; use " + method))
                    .with("Allow", method);
        }
        return action.run();
    }

    private List<Object> statuses() {
        List<Object> all = new ArrayList<>();
        live.status().stream().map(this::withBreaker).forEach(all::add);
        functions.get().forEach((name, function) -> all.add(functionStatus(name, function)));
        return all;
    }

    private Response status(String subscription) {
        var status = live.status(subscription);
        if (status.isPresent()) {
            return answer(200, withBreaker(status.get()));
        }
        String function = functions.get().get(subscription);
        if (function != null) {
            return answer(200, functionStatus(subscription, function));
        }
        return answer(404, error("no subscription '" + subscription + "'"));
    }

    /**
     * A Pulsar Function's subscription: its class and its outage circuit breaker; no generation (its code is the
     * manifest's).
     */
    private Map<String, Object> functionStatus(String subscription, String function) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("subscription", subscription);
        body.put("function", function);
        breakers.apply(subscription).ifPresent(breaker -> body.put("breaker", breaker));
        return body;
    }

    /** The status as the API answers it, with the subscription's outage circuit breaker when it runs. */
    private Map<String, Object> withBreaker(SubscriptionStatus status) {
        Map<String, Object> body = AdminJson.json(status);
        breakers.apply(status.subscription()).ifPresent(breaker -> body.put("breaker", breaker));
        live.rampStatus(status.subscription()).ifPresent(ramp -> body.put("canary", AdminJson.rampJson(ramp)));
        return body;
    }

    private Response upload(Request request, String subscription) throws IOException {
        return received(request, subscription, (staged, sha256) -> live.deploy(subscription, staged, sha256));
    }

    /** What is done with a JAR received whole: a deploy, or the start of a canary ramp. */
    private interface WithJar {
        Deployed take(Path staged, String sha256) throws SwapRefusedException, IOException;
    }

    /**
     * {@code POST /v1/subscriptions/{name}/canary?steps=5,25,100&stepEvery=60s} with the JAR as the body: a canary
     * ramp (docs/live-code.md, "Canary ramps"); {@code minCalls}, {@code ratePoints}, {@code rateRatio},
     * {@code p99Ratio} and {@code p99FloorMillis} change the thresholds it is judged by.
     */
    private Response canary(Request request, String subscription) throws IOException {
        Optional<String> function = live.canaryRefusal(subscription);
        if (function.isPresent()) {
            // Refused on the name alone: the body is never stored or looked at.
            return answer(400, error(function.get()));
        }
        Map<String, String> query = CanaryQuery.query(request.target());
        List<Integer> steps;
        Duration every;
        Thresholds limits;
        try {
            steps = CanaryQuery.steps(query.getOrDefault("steps", "5,25,100"));
            // 0s: steps by command only (settle deploy --step), as docs/live-code.md says.
            every = query.containsKey("stepEvery")
                    ? DurationText.parseZeroOrMore(query.get("stepEvery"))
                    : Duration.ofSeconds(60);
            Thresholds d = Thresholds.DEFAULTS;
            limits = new Thresholds(
                    (int) CanaryQuery.number(query, "minCalls", d.minCalls()),
                    CanaryQuery.number(query, "ratePoints", d.ratePoints()),
                    CanaryQuery.number(query, "rateRatio", d.rateRatio()),
                    CanaryQuery.number(query, "p99Ratio", d.p99Ratio()),
                    CanaryQuery.number(query, "p99FloorMillis", d.p99FloorMillis()));
        } catch (IllegalArgumentException e) {
            refusals.refused(Refusals.Reason.MALFORMED, request.peer());
            return answer(400, error("canary: " + e.getMessage()));
        }
        return received(
                request,
                subscription,
                (staged, sha256) -> live.canary(subscription, staged, sha256, steps, every, limits));
    }

    private Response rampCommand(String subscription, LiveCode.RampCommand command) throws IOException {
        try {
            return answer(200, AdminJson.json(live.ramp(subscription, command)));
        } catch (NoSuchElementException e) {
            return answer(404, error("no subscription '" + subscription + "'"));
        } catch (SwapRefusedException refused) {
            return answer(refused.reason() == SwapRefusedException.Reason.INVALID ? 400 : 409, error(refused));
        }
    }

    private Response received(Request request, String subscription, WithJar action) throws IOException {
        if (live.status(subscription).isEmpty()) {
            return answer(404, error("no subscription '" + subscription + "'"));
        }
        String length = request.header("Content-Length").orElse(null);
        if (length != null && parseLength(length) > maxJarSize) {
            // Refused on the header alone: the body is never stored or looked at.
            return answer(413, tooLarge());
        }
        Path staged = live.stagingFile(subscription);
        String sha256;
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            long received = copy(new DigestInputStream(request.body(), digest), staged);
            if (received > maxJarSize) {
                Files.deleteIfExists(staged);
                return answer(413, tooLarge());
            }
            sha256 = HexFormat.of().formatHex(digest.digest());
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(staged);
            throw e;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        try {
            return answer(200, AdminJson.json(action.take(staged, sha256)));
        } catch (SwapRefusedException refused) {
            return answer(refused.reason() == SwapRefusedException.Reason.INVALID ? 400 : 409, error(refused));
        } finally {
            Files.deleteIfExists(staged);
        }
    }

    private Response rollback(String subscription) throws IOException {
        try {
            return answer(200, AdminJson.json(live.rollback(subscription)));
        } catch (NoSuchElementException e) {
            return answer(404, error("no subscription '" + subscription + "'"));
        } catch (SwapRefusedException refused) {
            return answer(refused.reason() == SwapRefusedException.Reason.INVALID ? 400 : 409, error(refused));
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

    /** A status as the API answers it; {@code settle status --manifest} prints the same. */
    public static Map<String, Object> json(SubscriptionStatus status) {
        return AdminJson.json(status);
    }

    /**
     * Stops serving: no new request is taken; one under way runs to its end (a swap is done, or not begun, before
     * the runtime stops its drivers), though its answer may not reach the client.
     */
    @Override
    public void close() {
        server.stop(java.time.Duration.ofMinutes(1));
    }
}
