package dev.settle.runtime.preflight;

import dev.settle.runtime.manifest.PulsarSettings;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The broker's admin REST API at the manifest's {@code pulsar.adminUrl}, with the manifest's token (the only
 * authentication sent over HTTP here, as for packages): GETs and the schema compatibility question, nothing that
 * changes the broker.
 */
final class BrokerRest {
    /** Short: an unreachable broker makes each check could-not-check, and {@code settle run} waits for it anyway. */
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final String adminUrl;
    private final Optional<String> token;
    private final HttpClient http;
    /** Set at the first call that cannot reach the broker: the next calls of this preflight fail at once. */
    private IOException unreachable;

    private BrokerRest(String adminUrl, Optional<String> token) {
        this.adminUrl = adminUrl.endsWith("/") ? adminUrl.substring(0, adminUrl.length() - 1) : adminUrl;
        this.token = token;
        this.http = HttpClient.newBuilder()
                .connectTimeout(TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    /** Empty when the manifest has no {@code pulsar.adminUrl}. */
    static Optional<BrokerRest> of(PulsarSettings pulsar) throws IOException {
        if (pulsar.adminUrl().isEmpty()) {
            return Optional.empty();
        }
        Optional<String> token = Optional.empty();
        if (pulsar.authentication().orElse(null) instanceof PulsarSettings.Token given) {
            token = Optional.of(given.token().reveal());
        } else if (pulsar.authentication().orElse(null) instanceof PulsarSettings.TokenFile file) {
            token = Optional.of(Files.readString(file.file()).strip());
        }
        return Optional.of(new BrokerRest(pulsar.adminUrl().get(), token));
    }

    /** An answer of the admin API. */
    record Answer(String call, int status, String body, Map<String, List<String>> headers) {
        boolean ok() {
            return status / 100 == 2;
        }

        boolean forbidden() {
            return status == 401 || status == 403;
        }

        /** The body as JSON: maps, lists, strings, numbers, booleans; null for an empty body. */
        Object json() {
            if (body.isBlank()) {
                return null;
            }
            // A JSON text is a YAML text: the manifest's parser reads it, with safe loading, and no JSON library
            // is added for a few broker answers.
            return new Yaml(new SafeConstructor(new LoaderOptions())).load(body);
        }

        Optional<String> header(String name) {
            return headers.entrySet().stream()
                    .filter(entry -> entry.getKey().equalsIgnoreCase(name))
                    .flatMap(entry -> entry.getValue().stream())
                    .findFirst();
        }

        /** {@code GET /admin/... answered 403 (the broker's reason)}, for a detail. */
        String describe() {
            String reason = body.strip();
            if (reason.length() > 200) {
                reason = reason.substring(0, 200) + "...";
            }
            return call + " answered " + status + (reason.isEmpty() ? "" : " (" + reason + ")");
        }
    }

    Answer get(String path) throws IOException {
        return send("GET " + path, request(path).GET().build());
    }

    Answer post(String path, String json) throws IOException {
        return send(
                "POST " + path,
                request(path)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build());
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(adminUrl + path))
                .timeout(TIMEOUT)
                .header("Accept", "application/json");
        token.ifPresent(value -> request.header("Authorization", "Bearer " + value));
        return request;
    }

    private Answer send(String call, HttpRequest request) throws IOException {
        if (unreachable != null) {
            throw unreachable;
        }
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            return new Answer(
                    call,
                    response.statusCode(),
                    response.body(),
                    response.headers().map());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(call + " interrupted", e);
        } catch (IOException e) {
            unreachable =
                    new IOException("cannot reach the admin API at " + adminUrl + " (" + call + ": " + e + ")", e);
            throw unreachable;
        }
    }

    /** A poller's next round tries the broker again. */
    void forgetUnreachable() {
        unreachable = null;
    }

    String adminUrl() {
        return adminUrl;
    }
}
