package dev.settle.testbroker;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code java -jar settle-runtime.jar run <manifest>} as a child process, its output collected line by line: how the
 * runtime's own process tests and the reliability suite run Settle. The JAR is {@code -Dsettle.runtime.jar}, by
 * default {@code target/settle-runtime.jar} of the module the tests run in (the runtime's).
 */
public final class SettleProcess implements AutoCloseable {
    public static final Path RUNTIME_JAR = Path.of(
                    System.getProperty("settle.runtime.jar", "target/settle-runtime.jar"))
            .toAbsolutePath();

    /**
     * The JVM options of every test process, {@code -Dsettle.process.jvmOptions} (space-separated) to replace them. A
     * test's runtime lives seconds to a minute and handles little: C1 alone (TieredStopAtLevel=1) compiles what it runs
     * for a fraction of C2's CPU, and the serial collector has no threads of its own to start for a 256 MB heap. With
     * the class-data archive ({@link TestClassArchive}) a runtime's start to ready took 1.0-1.1 s and 0.82-0.93 s of CPU
     * on a loaded 2-core machine (load 18-36), against 3.9-4.6 s and 3.0-3.2 s with the JVM's defaults (load 11-37;
     * 2026-12-05, three starts each). A test that measures how fast the runtime runs compares it to itself, never to a figure of C2's;
     * {@code -Dsettle.process.jvmOptions="-Xmx256m -Xshare:auto"} starts them as before (options that name -Xshare
     * leave the test archive out).
     */
    static final List<String> JVM_OPTIONS =
            List.of(System.getProperty("settle.process.jvmOptions", "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
                    .trim()
                    .split("\\s+"));

    /** {@link #JVM_OPTIONS}, for a test that starts the runtime's JAR itself (the fidelity suite, with its log file). */
    public static List<String> jvmOptions() {
        return JVM_OPTIONS;
    }

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
        return start(prefix, List.of("run", manifest.toString()), label);
    }

    /** Runs {@code settle <arguments>} (another command than run, such as {@code dlq replay}). */
    public static SettleProcess command(String label, String... arguments) throws IOException {
        return start(List.of(), List.of(arguments), label);
    }

    private static SettleProcess start(List<String> prefix, List<String> arguments, String label) throws IOException {
        if (!Files.isRegularFile(RUNTIME_JAR)) {
            throw new IllegalStateException(RUNTIME_JAR + " is missing: it is the runtime's shaded JAR, built by"
                    + " ./mvnw -pl runtime -am package -DskipTests (or name another with -Dsettle.runtime.jar)");
        }
        List<String> command = new ArrayList<>(prefix);
        command.add("java");
        // Options that say -Xshare themselves decide alone.
        boolean shared = JVM_OPTIONS.stream().noneMatch(option -> option.startsWith("-Xshare:"));
        // Only a run lists its classes: it loads what every command loads and the Pulsar client besides.
        Path classList = shared
                ? TestClassArchive.forJar(RUNTIME_JAR)
                        .addOptions(command, arguments.get(0).equals("run"))
                : null;
        command.addAll(JVM_OPTIONS);
        command.addAll(List.of("-jar", RUNTIME_JAR.toString()));
        command.addAll(arguments);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (classList != null) {
            TestClassArchive.forJar(RUNTIME_JAR).dumpWhenExited(process, classList);
        }
        return new SettleProcess(process, label);
    }

    /**
     * A port free now, for a process this test starts to bind. Taken below the kernel's ephemeral range (32768 and up
     * by default): a port the kernel handed out for a bind to port 0 and got back could be handed out again to the next
     * bind to port 0 (the same runtime's HTTP port, say) before the process binds it. Each JVM starts at a place of its
     * own in the range, so two builds running side by side rarely try the same ports.
     */
    public static int freePort() throws IOException {
        for (int tries = 0; tries < FREE_PORTS; tries++) {
            int port = FIRST_FREE_PORT + Math.floorMod(nextPort.getAndIncrement(), FREE_PORTS);
            try (ServerSocket socket = new ServerSocket()) {
                socket.setReuseAddress(false);
                socket.bind(new InetSocketAddress(port));
                return port;
            } catch (IOException taken) {
                // In use: the next one.
            }
        }
        throw new IOException("no free port between " + FIRST_FREE_PORT + " and " + (FIRST_FREE_PORT + FREE_PORTS));
    }

    private static final int FIRST_FREE_PORT = 20_000;
    private static final int FREE_PORTS = 12_000;
    private static final AtomicInteger nextPort =
            new AtomicInteger(ThreadLocalRandom.current().nextInt(FREE_PORTS));

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
