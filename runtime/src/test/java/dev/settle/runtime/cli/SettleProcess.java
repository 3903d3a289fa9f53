package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** {@code java -jar settle-runtime.jar run <manifest>} as a child process, its output collected line by line. */
final class SettleProcess implements AutoCloseable {
    static final Path RUNTIME_JAR = Path.of("target", "settle-runtime.jar").toAbsolutePath();

    final Process process;
    final List<String> output = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private SettleProcess(Process process, String label) {
        this.process = process;
        reader = new Thread(
                () -> {
                    try (BufferedReader lines = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                            output.add(line);
                            System.out.println("[" + label + "] " + line);
                        }
                    } catch (IOException e) {
                        // The process is gone.
                    }
                },
                label + "-output");
        reader.setDaemon(true);
        reader.start();
    }

    static SettleProcess run(Path manifest, String label) throws IOException {
        assertThat(RUNTIME_JAR).as("the shaded runtime JAR (built by package)").exists();
        return new SettleProcess(
                new ProcessBuilder("java", "-Xmx256m", "-jar", RUNTIME_JAR.toString(), "run", manifest.toString())
                        .redirectErrorStream(true)
                        .start(),
                label);
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** The status and body of {@code GET path} on the process's HTTP port; status -1 when nothing answers. */
    static HttpResponse<String> get(int port, String path) {
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

    static int status(int port, String path) {
        HttpResponse<String> response = get(port, path);
        return response == null ? -1 : response.statusCode();
    }

    static String body(int port, String path) {
        HttpResponse<String> response = get(port, path);
        return response == null ? "" : response.body();
    }

    long lines(String prefix) {
        return output.stream().filter(line -> line.startsWith(prefix)).count();
    }

    /** SIGTERM, as Kubernetes sends it (Process.destroy() would also close our end of the output). */
    void sigterm() {
        process.toHandle().destroy();
    }

    boolean exitsWithin(long seconds) throws InterruptedException {
        boolean exited = process.waitFor(seconds, TimeUnit.SECONDS);
        if (exited) {
            reader.join(5_000);
        }
        return exited;
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
