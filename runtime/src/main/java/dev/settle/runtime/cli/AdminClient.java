package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.AdminSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * What {@code deploy}, {@code rollback} and {@code status} share: where the admin API is, the token, one request,
 * and how its answer becomes output and an exit code (0 done, 2 refused, 1 the API could not be reached or would
 * not let us in).
 */
final class AdminClient {
    /** Exit code of a request the API refused (400, 404, 409, 413). */
    static final int REFUSED = 2;

    /** Exit code of an API that cannot be reached or does not take the token. */
    static final int UNREACHABLE = 1;

    @Option(
            names = "--admin",
            paramLabel = "URL",
            defaultValue = "http://127.0.0.1:8081",
            description = "the admin API (default ${DEFAULT-VALUE}): admin.bindAddress and admin.port of the manifest")
    URI admin;

    @Option(
            names = "--token-file",
            paramLabel = "FILE",
            description = "a file holding the admin token (the manifest's admin.token); required with --admin")
    Path tokenFile;

    /** A status, and the answer's JSON. */
    record Answer(int status, Map<String, Object> body) {}

    Answer send(String method, String path, HttpRequest.BodyPublisher body) throws AdminException {
        if (tokenFile == null) {
            throw new AdminException(
                    Main.USAGE,
                    "--token-file is required to reach the admin API (or give --manifest, when the manifest keeps its"
                            + " code in Pulsar)");
        }
        String token;
        try {
            token = Files.readString(tokenFile, StandardCharsets.UTF_8).strip();
        } catch (NoSuchFileException e) {
            throw new AdminException(REFUSED, "no token file at " + tokenFile.toAbsolutePath());
        } catch (IOException e) {
            throw new AdminException(REFUSED, "cannot read the token file " + tokenFile + ": " + e.getMessage());
        }
        URI uri = admin.resolve(path);
        HttpRequest request = HttpRequest.newBuilder(uri)
                .timeout(Duration.ofMinutes(2))
                .header("Authorization", "Bearer " + token)
                .method(method, body)
                .build();
        HttpResponse<String> response;
        try {
            response = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(10))
                    .build()
                    .send(request, HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException e) {
            throw new AdminException(
                    UNREACHABLE, "nothing answers at " + admin + "; is settle running with admin: in its manifest?");
        } catch (IOException e) {
            if (body.contentLength() > 0) {
                // The runtime reads away a refused upload for a few seconds only, then closes: past that, its answer
                // is lost to a reset connection, and the likeliest refusal is the size.
                throw new AdminException(
                        UNREACHABLE,
                        method + " " + uri + " failed while sending " + body.contentLength() + " bytes: " + e
                                + "; the runtime refuses a JAR over its admin.maxJarSize ("
                                + AdminSettings.DEFAULT_MAX_JAR_SIZE + " bytes unless its manifest says otherwise)"
                                + " without reading it: check the JAR's size, or its log");
            }
            throw new AdminException(UNREACHABLE, method + " " + uri + " failed: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AdminException(UNREACHABLE, "interrupted");
        }
        Map<String, Object> json;
        try {
            json = asMap(JsonValue.parse(response.body()));
        } catch (IllegalArgumentException e) {
            throw new AdminException(
                    UNREACHABLE,
                    uri + " answered " + response.statusCode() + " with no JSON; is it Settle's admin API?");
        }
        if (response.statusCode() == 401) {
            throw new AdminException(
                    UNREACHABLE,
                    "the admin API refused the token in " + tokenFile + ": " + Printable.text(json.get("error")));
        }
        return new Answer(response.statusCode(), json);
    }

    /** Prints a refusal's problems, one a line, and returns its exit code. */
    static int refused(Answer answer, PrintWriter err) {
        err.println("settle: refused (" + answer.status() + "): "
                + Printable.text(answer.body().get("error")));
        Object problems = answer.body().get("problems");
        if (problems instanceof List<?> list) {
            for (Object problem : list) {
                err.println("  - " + Printable.text(problem));
            }
        }
        err.flush();
        return REFUSED;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object json) {
        if (!(json instanceof Map)) {
            throw new IllegalArgumentException("not a JSON object");
        }
        return (Map<String, Object>) json;
    }

    /** A JSON number as the whole number it is, or the text as is. */
    static String whole(Object value) {
        return value instanceof Double number && number == Math.rint(number)
                ? Long.toString(number.longValue())
                : String.valueOf(value);
    }

    /** Why a request did not get an answer to act on, and the exit code that says so. */
    static final class AdminException extends Exception {
        private static final long serialVersionUID = 1L;
        private final int exitCode;

        AdminException(int exitCode, String message) {
            super(message);
            this.exitCode = exitCode;
        }

        /** Prints the message on {@code err}, as every admin command does, and gives the exit code to return. */
        int report(PrintWriter err) {
            err.println("settle: " + getMessage());
            err.flush();
            return exitCode;
        }
    }
}
