package dev.settle.testbroker;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code java -jar settle-runtime.jar run <manifest>} as a child process, its output collected line by line: how the
 * runtime's own process tests and the reliability suite run Settle. The JAR is {@code -Dsettle.runtime.jar}, by
 * default {@code target/settle-runtime.jar} of the module the tests run in (the runtime's).
 */
public final class SettleProcess implements AutoCloseable {
    public static final Path RUNTIME_JAR = Path.of(
                    System.getProperty("settle.runtime.jar", "target/settle-runtime.jar"))
            .toAbsolutePath();

    public final Process process;
    /** Its output, line by line, as it comes. */
    public final List<String> output;

    private final ProcessOutput reader;

    private SettleProcess(Process process, String label) {
        this.process = process;
        reader = new ProcessOutput(process, label);
        output = reader.lines;
    }

    public static SettleProcess run(Path manifest, String label) throws IOException {
        return run(manifest, label, List.of());
    }

    /**
     * As {@link #run(Path, String)}, the command started through {@code prefix} (such as {@code ip netns exec <ns>}, to
     * run it in another network namespace).
     */
    public static SettleProcess run(Path manifest, String label, List<String> prefix) throws IOException {
        List<String> command = new java.util.ArrayList<>(prefix);
        command.addAll(List.of("java", "-Xmx256m", "-jar", RUNTIME_JAR.toString(), "run", manifest.toString()));
        return start(command, label);
    }

    /** Runs {@code settle <arguments>} (another command than run, such as {@code dlq replay}). */
    public static SettleProcess command(String label, String... arguments) throws IOException {
        List<String> command = new java.util.ArrayList<>(List.of("java", "-Xmx256m", "-jar", RUNTIME_JAR.toString()));
        command.addAll(List.of(arguments));
        return start(command, label);
    }

    private static SettleProcess start(List<String> command, String label) throws IOException {
        if (!Files.isRegularFile(RUNTIME_JAR)) {
            throw new IllegalStateException(RUNTIME_JAR + " is missing: it is the runtime's shaded JAR, built by"
                    + " ./mvnw -pl runtime -am package -DskipTests (or name another with -Dsettle.runtime.jar)");
        }
        return new SettleProcess(
                new ProcessBuilder(command).redirectErrorStream(true).start(), label);
    }

    public static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** The status and body of {@code GET path} on the process's HTTP port; status -1 when nothing answers. */
    public static HttpResponse<String> get(int port, String path) {
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

    public static int status(int port, String path) {
        HttpResponse<String> response = get(port, path);
        return response == null ? -1 : response.statusCode();
    }

    public static String body(int port, String path) {
        HttpResponse<String> response = get(port, path);
        return response == null ? "" : response.body();
    }

    public long lines(String prefix) {
        return output.stream().filter(line -> line.startsWith(prefix)).count();
    }

    /** SIGTERM, as Kubernetes sends it (Process.destroy() would also close our end of the output). */
    public void sigterm() {
        process.toHandle().destroy();
    }

    /** SIGKILL, as the OOM killer or a lost node ends a process: no drain, no flush of pending acknowledgements. */
    public void sigkill() throws InterruptedException {
        process.toHandle().destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    public boolean exitsWithin(long seconds) throws InterruptedException {
        boolean exited = process.waitFor(seconds, TimeUnit.SECONDS);
        if (exited) {
            reader.awaitEnd(5_000);
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
