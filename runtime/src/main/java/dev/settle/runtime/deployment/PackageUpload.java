package dev.settle.runtime.deployment;

import dev.settle.runtime.manifest.PackageRef;
import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.runtime.manifest.UntrustedText;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores a JAR as a package version in Pulsar's package management (docs/live-code.md, "Where code is kept"): the
 * multipart {@code POST} that {@code pulsar-admin packages upload} makes, to the manifest's {@code pulsar.adminUrl}
 * and nowhere else, with the manifest's token, as {@link PackageFetch} reads one.
 */
public final class PackageUpload {
    private static final Logger log = LoggerFactory.getLogger(PackageUpload.class);

    private PackageUpload() {}

    /**
     * Uploads {@code jar} as {@code ref}. A version that exists already is left as it is: Settle's versions are the
     * JAR's sha256, so the bytes stored are these (and every runtime checks them against the record anyway).
     *
     * @throws IOException with what went wrong and what to do
     */
    public static void upload(PulsarSettings pulsar, PackageRef ref, Path jar, String description) throws IOException {
        String adminUrl = pulsar.adminUrl()
                .orElseThrow(() -> new IOException("pulsar.adminUrl is not set; set it to store " + ref));
        String boundary = "settle-" + UUID.randomUUID();
        // PackageMetadata as JSON; the description is ours, with no quote or backslash to escape.
        String metadata = "{\"description\":\"" + description.replaceAll("[\"\\\\\\p{Cntrl}]", " ")
                + "\",\"contact\":\"settle\",\"properties\":{}}";
        byte[] head = ("--" + boundary + "\r\n"
                        + "Content-Disposition: form-data; name=\"file\"; filename=\"" + ref.name() + ".jar\"\r\n"
                        + "Content-Type: application/octet-stream\r\n\r\n")
                .getBytes(StandardCharsets.UTF_8);
        byte[] tail = ("\r\n--" + boundary + "\r\n"
                        + "Content-Disposition: form-data; name=\"metadata\"\r\n"
                        + "Content-Type: application/json\r\n\r\n"
                        + metadata + "\r\n--" + boundary + "--\r\n")
                .getBytes(StandardCharsets.UTF_8);
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(adminUrl + ref.adminPath()))
                .timeout(pulsar.packageTimeout())
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.concat(
                        HttpRequest.BodyPublishers.ofByteArray(head),
                        HttpRequest.BodyPublishers.ofFile(jar),
                        HttpRequest.BodyPublishers.ofByteArray(tail)));
        PackageFetch.token(pulsar, ref).ifPresent(token -> request.header("Authorization", "Bearer " + token));
        HttpResponse<String> response = PackageFetch.send(
                request.build(),
                HttpResponse.BodyHandlers.ofString(),
                "storing package " + ref,
                "cannot store package " + ref + " at " + adminUrl);
        String text = UntrustedText.escape(response.body().strip(), 300);
        if (response.statusCode() / 100 == 2) {
            log.info("package {}: stored from {} ({} bytes)", ref, jar, Files.size(jar));
            return;
        }
        if (text.contains("already exist")) {
            log.info("package {}: stored already (its version is its sha256)", ref);
            return;
        }
        throw new IOException("cannot store package " + ref + ": " + adminUrl + " answered " + response.statusCode()
                + (text.isEmpty() ? "" : " (" + text + ")") + "; "
                + (List.of(401, 403).contains(response.statusCode())
                        ? "the manifest's pulsar.authentication is not allowed to upload packages to " + ref.tenant()
                                + "/" + ref.namespace()
                        : "check that the broker has enablePackagesManagement=true"));
    }
}
