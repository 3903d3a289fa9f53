package dev.settle.fidelity;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** GETs on the runtime's loopback HTTP port; status -1 and an empty body when nothing answers. */
final class Http {
    private Http() {}

    static int status(int port, String path) {
        HttpResponse<String> response = get(port, path);
        return response == null ? -1 : response.statusCode();
    }

    static String body(int port, String path) {
        HttpResponse<String> response = get(port, path);
        return response == null ? "" : response.body();
    }

    private static HttpResponse<String> get(int port, String path) {
        try {
            return HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
