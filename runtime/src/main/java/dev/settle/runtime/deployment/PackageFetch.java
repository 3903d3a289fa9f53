package dev.settle.runtime.deployment;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.OwnedFolder;
import dev.settle.runtime.manifest.PackageRef;
import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.runtime.manifest.UntrustedText;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fetches a {@code jar: function://...} package from Pulsar's package management into its place in
 * {@code pulsar.packageCache} (docs/live-code.md, "Pulsar packages"): through the REST endpoint the admin client's
 * {@code packages().download} calls, at the manifest's {@code pulsar.adminUrl} and nowhere else, with the
 * manifest's token. The cached JAR's sha256 is kept beside it and checked at every start: a JAR that no longer
 * matches is fetched again.
 */
public final class PackageFetch {
    private static final Logger log = LoggerFactory.getLogger(PackageFetch.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private PackageFetch() {}

    /**
     * Makes sure {@code ref}'s JAR is at {@code jar}, verified.
     *
     * @throws IOException with what went wrong and what to do
     */
    public static void fetch(PulsarSettings pulsar, PackageRef ref, Path jar) throws IOException {
        // A JAR with a matching sha256 in the cache runs without a fetch: the cache must be this user's alone.
        OwnedFolder.create(pulsar.packageCache(), "pulsar.packageCache");
        Path sha = jar.resolveSibling(jar.getFileName() + ".sha256");
        if (Files.isRegularFile(jar) && Files.isRegularFile(sha)) {
            String kept = Files.readString(sha, StandardCharsets.US_ASCII).strip();
            String now = sha256(jar);
            if (now.equals(kept)) {
                log.info("package {}: the cached {} (sha256 {}) is verified", ref, jar, now);
                return;
            }
            log.warn(
                    "package {}: the cached {} has sha256 {}, not the {} it was fetched with: fetching it again",
                    ref,
                    jar,
                    now,
                    kept);
        }
        String adminUrl = pulsar.adminUrl()
                .orElseThrow(() -> new IOException("pulsar.adminUrl is not set; set it to fetch " + ref));
        Duration deadline = pulsar.packageTimeout();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(adminUrl + ref.adminPath()))
                .timeout(deadline.compareTo(TIMEOUT) < 0 ? deadline : TIMEOUT)
                .GET();
        token(pulsar, ref).ifPresent(token -> request.header("Authorization", "Bearer " + token));
        Files.createDirectories(jar.getParent());
        Path part = Files.createTempFile(jar.getParent(), jar.getFileName().toString(), ".part");
        try {
            HttpResponse<InputStream> response = send(
                    request.build(),
                    HttpResponse.BodyHandlers.ofInputStream(),
                    "fetching package " + ref,
                    "cannot fetch package " + ref + " from " + adminUrl);
            MessageDigest digest = sha256();
            long bytes = 0;
            long max = pulsar.packageMaxSize();
            AtomicBoolean late = new AtomicBoolean();
            InputStream body = response.body();
            // The request's timeout ends at the answer's head; a server trickling the body would hang validate and
            // the start for ever. Closing the stream at the deadline fails the read under way.
            CompletableFuture.delayedExecutor(deadline.toMillis(), TimeUnit.MILLISECONDS)
                    .execute(() -> {
                        late.set(true);
                        closeQuietly(body);
                    });
            try (InputStream in = body;
                    OutputStream out = Files.newOutputStream(part)) {
                if (response.statusCode() != 200) {
                    // The server's words, escaped: they reach the log and validate's output.
                    String text =
                            UntrustedText.escape(new String(in.readNBytes(300), StandardCharsets.UTF_8).strip(), 300);
                    throw new IOException("cannot fetch package " + ref + ": " + adminUrl + " answered "
                            + response.statusCode() + (text.isEmpty() ? "" : " (" + text + ")") + "; "
                            + advice(response.statusCode(), ref));
                }
                long announced =
                        response.headers().firstValueAsLong("Content-Length").orElse(-1);
                if (announced > max) {
                    throw tooLarge(ref, announced, max);
                }
                byte[] buffer = new byte[64 * 1024];
                for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                    digest.update(buffer, 0, read);
                    out.write(buffer, 0, read);
                    bytes += read;
                    if (bytes > max) {
                        throw tooLarge(ref, bytes, max);
                    }
                }
            } catch (IOException e) {
                if (late.get()) {
                    throw new IOException(
                            "cannot fetch package " + ref + " from " + adminUrl + ": not done within "
                                    + "pulsar.packageTimeout (" + DurationText.format(pulsar.packageTimeout())
                                    + ", " + bytes + " bytes received); raise it, or check the server",
                            e);
                }
                throw e;
            }
            String fetched = HexFormat.of().formatHex(digest.digest());
            Path shaPart =
                    Files.createTempFile(jar.getParent(), sha.getFileName().toString(), ".part");
            Files.writeString(shaPart, fetched + "\n", StandardCharsets.US_ASCII);
            Files.move(part, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            Files.move(shaPart, sha, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            log.info("package {}: fetched from {} into {} ({} bytes, sha256 {})", ref, adminUrl, jar, bytes, fetched);
        } finally {
            Files.deleteIfExists(part);
        }
    }

    private static IOException tooLarge(PackageRef ref, long bytes, long max) {
        return new IOException("package " + ref + " is larger than pulsar.packageMaxSize (" + max + " bytes; "
                + (bytes > max ? "at least " + bytes : bytes) + " sent); raise pulsar.packageMaxSize if it is right");
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // Cutting a download off: its reader sees the failure.
        }
    }

    private static String advice(int status, PackageRef ref) {
        return switch (status) {
            case 401, 403 ->
                "the manifest's pulsar.authentication is not allowed to download packages of " + ref.tenant() + "/"
                        + ref.namespace();
            case 404 ->
                "no such package version: upload it (pulsar-admin packages upload " + ref
                        + " --path <jar> --description ...) or fix the version";
            default -> "check that the broker has enablePackagesManagement=true";
        };
    }

    /**
     * Sends {@code request} to the broker's admin API, following no redirect (the token goes to the admin URL only); a
     * failure says what it was {@code doing} or, when the broker cannot be reached, {@code cannot} and what to check.
     */
    static <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> body, String doing, String cannot)
            throws IOException {
        try {
            return HttpClient.newBuilder()
                    .connectTimeout(TIMEOUT)
                    .followRedirects(HttpClient.Redirect.NEVER)
                    .build()
                    .send(request, body);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while " + doing, e);
        } catch (IOException e) {
            throw new IOException(cannot + " (" + e + "); check pulsar.adminUrl and that the broker is up", e);
        }
    }

    /** The manifest's token; only token authentication is used to fetch packages. */
    static Optional<String> token(PulsarSettings pulsar, PackageRef ref) throws IOException {
        if (pulsar.authentication().isEmpty()) {
            return Optional.empty();
        }
        if (pulsar.authentication().get() instanceof PulsarSettings.Token token) {
            return Optional.of(token.token().reveal());
        }
        if (pulsar.authentication().get() instanceof PulsarSettings.TokenFile file) {
            return Optional.of(Files.readString(file.file()).strip());
        }
        throw new IOException("package " + ref + " cannot be fetched with the manifest's "
                + pulsar.authentication().get().getClass().getSimpleName()
                + " authentication: Settle fetches packages with a token only; use token authentication, or ship"
                + " the JAR in the image");
    }

    public static String sha256(Path file) throws IOException {
        MessageDigest digest = sha256();
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(file)) {
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                digest.update(buffer, 0, read);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
