package dev.settle.runtime.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * {@code settle dev}: a Pulsar standalone on this machine for a developer's loop, on the standard ports, keeping its
 * topics and messages in a folder across restarts, until Ctrl-C.
 *
 * <p>The broker is the test broker's ({@code settle-test-broker}: ~330 jars, ~240 MB), which never enters this
 * runtime's JAR: the clone's {@code ./settle} launcher names its classes with {@code -Dsettle.dev.broker}, and they
 * are loaded here in a class loader of their own under the platform loader, which loads the broker's jars in yet
 * another (so the broker's unshaded Pulsar client never meets this JAR's shaded one). Only JDK types cross.
 */
@Command(
        name = "dev",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Run a local Pulsar standalone for development, on pulsar://localhost:6650 and http://localhost:8080 (the"
                    + " defaults of the quickstart and of the archetype's settle.yaml), until Ctrl-C.",
            "Topics and messages are kept in --data across restarts (start it again with the same ports). The broker's"
                    + " own log goes to a file in that folder; the URLs are printed once it serves.",
            "Needs a clone of the Settle repository: run it there as ./settle dev, which builds the broker."
        },
        exitCodeListHeading = "%nExit codes:%n")
final class DevCommand extends PrintingCommand {
    /** The system property the clone's launcher sets to the test broker's classes. */
    static final String BROKER_PROPERTY = "settle.dev.broker";

    static final String READY = "settle dev: Pulsar is ready";

    @Option(
            names = "--port",
            paramLabel = "PORT",
            defaultValue = "6650",
            description = "the binary protocol port, for pulsar:// URLs (default: ${DEFAULT-VALUE})")
    int port;

    @Option(
            names = "--http-port",
            paramLabel = "PORT",
            defaultValue = "8080",
            description = "the web service port, for http:// admin URLs (default: ${DEFAULT-VALUE})")
    int httpPort;

    @Option(
            names = "--bookie-port",
            paramLabel = "PORT",
            defaultValue = "3181",
            description = "the storage (bookie) port, on 127.0.0.1 (default: ${DEFAULT-VALUE})")
    int bookiePort;

    @Option(
            names = "--data",
            paramLabel = "DIR",
            description = "where topics, messages and the broker's log are kept (default: ~/.settle/dev)")
    Path data;

    @Override
    int run(PrintWriter out, PrintWriter err) throws Exception {
        String broker = System.getProperty(BROKER_PROPERTY);
        if (broker == null || !Files.isDirectory(Path.of(broker))) {
            err.println("settle dev: the embedded Pulsar broker is not here: it comes with a clone of the Settle"
                    + " repository, where './settle dev' builds and runs it (docs/dev.md). Any Pulsar standalone does"
                    + " as well: 'bin/pulsar standalone' from a Pulsar download serves the same ports.");
            err.flush();
            return 1;
        }
        Path folder = (data != null ? data : Path.of(System.getProperty("user.home"), ".settle", "dev"))
                .toAbsolutePath()
                .normalize();
        Map<String, Integer> ports = new LinkedHashMap<>();
        ports.put("--port", port);
        ports.put("--http-port", httpPort);
        ports.put("--bookie-port", bookiePort);
        for (Map.Entry<String, Integer> entry : ports.entrySet()) {
            if (!free(entry.getValue())) {
                err.println("settle dev: port " + entry.getValue() + " (" + entry.getKey() + ") is in use on"
                        + " 127.0.0.1, perhaps by a Pulsar already running: use it, stop it, or choose another with "
                        + entry.getKey());
                err.flush();
                return 1;
            }
        }
        Files.createDirectories(folder);
        // Owner only: the folder holds every message produced to the dev broker, and its log (issue 40: 0755/0644).
        OwnerOnly.folder(folder);
        out.println("settle dev: starting Pulsar (about 10 s; data in " + folder + ", broker log in "
                + folder.resolve("broker.log") + ") ...");
        out.flush();
        // The broker's Log4j writes to the folder's broker.log, not to this terminal: its warnings and stack traces
        // at start and stop are the standalone's own, and are not what a developer came to see.
        Path brokerLog = folder.resolve("broker.log");
        System.setProperty("settle.pulsar.logFile", brokerLog.toString());
        // So does whatever else the broker's libraries print on their own: java.util.logging's console handler, an
        // uncaught exception's stack trace, Log4j's status logger, a library's printStackTrace. A metadata store's
        // AlreadyClosedException warning once reached the terminal while the broker stopped, past the Log4j file
        // appender. This command's own lines go through picocli's writers, bound to the terminal before this point.
        OwnerOnly.file(brokerLog);
        PrintStream brokerConsole = new PrintStream(
                Files.newOutputStream(brokerLog, StandardOpenOption.CREATE, StandardOpenOption.APPEND),
                true,
                StandardCharsets.UTF_8);
        System.setOut(brokerConsole);
        System.setErr(brokerConsole);
        long started = System.nanoTime();
        URLClassLoader loader = new URLClassLoader(
                "settle-dev-broker", new URL[] {Path.of(broker).toUri().toURL()}, ClassLoader.getPlatformClassLoader());
        AutoCloseable pulsar;
        try {
            pulsar = (AutoCloseable) loader.loadClass("dev.settle.testbroker.EmbeddedPulsar")
                    .getMethod("startDurable", Path.class, String.class, int.class, int.class, int.class)
                    .invoke(null, folder, "127.0.0.1", port, httpPort, bookiePort);
        } catch (InvocationTargetException failed) {
            err.println("settle dev: Pulsar did not start: " + failed.getCause().getMessage() + " (the broker's log: "
                    + folder.resolve("broker.log") + ")");
            err.flush();
            loader.close();
            return 1;
        }
        CountDownLatch stop = new CountDownLatch(1);
        Map<Signal, SignalHandler> previous = new LinkedHashMap<>();
        for (String name : new String[] {"INT", "TERM"}) {
            Signal signal = new Signal(name);
            previous.put(signal, Signal.handle(signal, received -> stop.countDown()));
        }
        if (previous.get(new Signal("INT")) == SignalHandler.SIG_IGN) {
            // A process started with SIGINT ignored (a shell's background job) keeps it ignored: the JVM installs no
            // handler (Signal.handle answers SIG_IGN), so Ctrl-C would do nothing, without a word.
            out.println("settle dev: Ctrl-C is ignored in this process (it was started in the background); stop it"
                    + " with kill " + ProcessHandle.current().pid() + " (SIGTERM)");
        }
        out.printf("%s in %.1f s%n", READY, (System.nanoTime() - started) / 1e9);
        out.println("  service URL: pulsar://localhost:" + port + "   (a manifest's pulsar.serviceUrl)");
        out.println("  admin URL:   http://localhost:" + httpPort + "   (pulsar.adminUrl, pulsar-admin)");
        out.println("  try:         settle produce persistent://public/default/names"
                + (port == 6650 ? "" : " --service-url pulsar://localhost:" + port) + " ada");
        out.println("Ctrl-C stops it; topics and messages stay in " + folder);
        out.flush();
        stop.await();
        // Ctrl-C again while stopping ends the JVM as usual, and a JVM that goes on (a test's) gets its handlers back.
        previous.forEach(Signal::handle);
        out.println("settle dev: stopping Pulsar");
        out.flush();
        try {
            pulsar.close();
        } finally {
            loader.close();
        }
        out.println("settle dev: stopped");
        out.flush();
        return 0;
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }
}
