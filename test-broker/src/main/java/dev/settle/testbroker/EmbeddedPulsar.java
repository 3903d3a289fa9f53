package dev.settle.testbroker;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.net.MalformedURLException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * A real Pulsar standalone (broker, one bookie, in-memory metadata) in this JVM, in a class loader of its own.
 *
 * <p>The broker's class path is resolved by Maven into {@code broker.classpath} when this module is built; it is
 * loaded under the platform class loader, so none of its classes (the unshaded Pulsar client, Netty, Log4j,
 * Jackson...) is visible to the code under test, and none of ours to it. It binds 127.0.0.1 on free ports and
 * keeps its data in a temporary folder that {@link #close()} removes.
 */
public final class EmbeddedPulsar implements AutoCloseable {
    private static final String STANDALONE = "dev.settle.testbroker.standalone.IsolatedStandalone";
    /** Held: java.util.logging keeps loggers weakly, and a collected one forgets its level. */
    private static final List<java.util.logging.Logger> JUL_LOGGERS = List.of(
            java.util.logging.Logger.getLogger("org.glassfish.jersey"),
            java.util.logging.Logger.getLogger("io.opentelemetry"));

    /** The brokers of this JVM that serve clients, by their endpoints: {@link #inThisJvm}. */
    private static final Map<PulsarEndpoints, EmbeddedPulsar> RUNNING = new java.util.concurrent.ConcurrentHashMap<>();

    private final URLClassLoader loader;
    private final AutoCloseable standalone;
    private final Path dataDir;
    private final PulsarEndpoints endpoints;
    private final Optional<String> serviceUrlTls;
    private final long startMillis;
    /** Whether {@link #close()} leaves the data folder, for a restart on it ({@link #startDurable}). */
    private final boolean keepData;

    private EmbeddedPulsar(
            URLClassLoader loader,
            AutoCloseable standalone,
            Path dataDir,
            PulsarEndpoints endpoints,
            Optional<String> serviceUrlTls,
            long millis,
            boolean keepData) {
        this.keepData = keepData;
        this.loader = loader;
        this.standalone = standalone;
        this.dataDir = dataDir;
        this.endpoints = endpoints;
        this.serviceUrlTls = serviceUrlTls;
        this.startMillis = millis;
    }

    /** Starts a broker; takes about 9 s on two cores. */
    public static EmbeddedPulsar start() throws Exception {
        return start(Map.of());
    }

    /**
     * Starts a broker with extra configuration properties, as a {@code broker.conf} would hold them (authentication,
     * TLS with {@code brokerServicePortTls=0} for a free port...). For the few tests that need a broker unlike the
     * shared one; each costs a start of its own.
     */
    public static EmbeddedPulsar start(Map<String, String> configuration) throws Exception {
        Path dataDir = Files.createTempDirectory("settle-pulsar-");
        return launch(
                dataDir,
                false,
                new Class<?>[] {String.class, Map.class},
                "start",
                dataDir.toString(),
                Map.copyOf(configuration));
    }

    /**
     * Starts a broker on the given ports (0: a free one), such as Pulsar's standard 6650 and 8080, so that a manifest
     * written for a local broker reaches it as it is; the data is wiped as for {@link #start()}.
     */
    public static EmbeddedPulsar startOn(int brokerPort, int webPort) throws Exception {
        Path dataDir = Files.createTempDirectory("settle-pulsar-");
        return launch(
                dataDir,
                false,
                new Class<?>[] {String.class, int.class, int.class},
                "startOn",
                dataDir.toString(),
                brokerPort,
                webPort);
    }

    /**
     * Starts a broker that keeps its data in {@code dataDir} (bookie journal and ledgers, metadata) and finds it
     * again when started on the same folder with the same ports: a broker that can be restarted, as in production.
     * It binds and advertises {@code address} (a loopback or a test's own veth address). {@link #close()} leaves the
     * folder.
     */
    public static EmbeddedPulsar startDurable(Path dataDir, String address, int brokerPort, int webPort, int bookiePort)
            throws Exception {
        Files.createDirectories(dataDir);
        return launch(
                dataDir,
                true,
                new Class<?>[] {String.class, String.class, int.class, int.class, int.class},
                "startDurable",
                dataDir.toString(),
                address,
                brokerPort,
                webPort,
                bookiePort);
    }

    /**
     * Starts the store of a cluster of brokers (ZooKeeper on {@code zookeeperPort} and one bookie, no broker), its
     * data kept in {@code dataDir}; brokers started with {@link #startClusterBroker} on the same ZooKeeper port, each
     * in a process of its own, form the cluster. It has no {@link #endpoints()}.
     */
    public static EmbeddedPulsar startClusterStore(Path dataDir, int zookeeperPort, int bookiePort) throws Exception {
        Files.createDirectories(dataDir);
        return launch(
                dataDir,
                true,
                new Class<?>[] {String.class, int.class, int.class},
                "startClusterStore",
                dataDir.toString(),
                zookeeperPort,
                bookiePort);
    }

    /**
     * Starts one broker of the cluster whose store listens on {@code zookeeperPort} ({@link #startClusterStore}). A
     * topic it serves is taken over by another broker of the cluster when it stops, and it finds its share again when
     * started on the same folder and ports.
     */
    public static EmbeddedPulsar startClusterBroker(
            Path dataDir, String address, int zookeeperPort, int brokerPort, int webPort) throws Exception {
        Files.createDirectories(dataDir);
        return launch(
                dataDir,
                true,
                new Class<?>[] {String.class, String.class, int.class, int.class, int.class},
                "startClusterBroker",
                dataDir.toString(),
                address,
                zookeeperPort,
                brokerPort,
                webPort);
    }

    private static EmbeddedPulsar launch(
            Path dataDir, boolean keepData, Class<?>[] parameterTypes, String method, Object... arguments)
            throws Exception {
        long started = System.nanoTime();
        quietBrokerLogs(dataDir);
        URLClassLoader loader =
                new URLClassLoader("pulsar-broker", brokerClassPath(), ClassLoader.getPlatformClassLoader());
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        // The broker's threads inherit the context class loader of the thread that starts them.
        thread.setContextClassLoader(loader);
        try {
            Object standalone = loader.loadClass(STANDALONE)
                    .getMethod(method, parameterTypes)
                    .invoke(null, arguments);
            @SuppressWarnings("unchecked")
            Map<String, String> urls = ((Supplier<Map<String, String>>) standalone).get();
            // A cluster's store has no broker, and so no endpoints.
            PulsarEndpoints endpoints = urls.containsKey("serviceUrl")
                    ? new PulsarEndpoints(urls.get("serviceUrl"), urls.get("adminUrl"))
                    : null;
            long millis = (System.nanoTime() - started) / 1_000_000;
            EmbeddedPulsar pulsar = new EmbeddedPulsar(
                    loader,
                    (AutoCloseable) standalone,
                    dataDir,
                    endpoints,
                    Optional.ofNullable(urls.get("serviceUrlTls")),
                    millis,
                    keepData);
            if (endpoints != null) {
                RUNNING.put(endpoints, pulsar);
            }
            return pulsar;
        } catch (InvocationTargetException e) {
            loader.close();
            if (!keepData) {
                deleteRecursively(dataDir);
            }
            throw new IllegalStateException(
                    "the embedded Pulsar broker failed to start: " + e.getCause(), e.getCause());
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    public PulsarEndpoints endpoints() {
        if (endpoints == null) {
            throw new IllegalStateException("a cluster's store has no broker to reach");
        }
        return endpoints;
    }

    /** The {@code pulsar+ssl://} URL, when the broker was started with {@code brokerServicePortTls}. */
    public Optional<String> serviceUrlTls() {
        return serviceUrlTls;
    }

    /**
     * The broker started in this JVM that answers at {@code endpoints}, if any: a test or the benchmarks given only
     * the endpoints of the shared broker reach it here. Empty for a broker given by URL or in a container.
     */
    public static Optional<EmbeddedPulsar> inThisJvm(PulsarEndpoints endpoints) {
        return Optional.ofNullable(RUNNING.get(endpoints));
    }

    /**
     * Counts, from now on, the commands clients send this broker: by command type ({@code ACK}, {@code FLOW},
     * {@code SEND}, {@code REDELIVER_UNACKNOWLEDGED_MESSAGES}...) and what they carried ({@code ACK ids},
     * {@code FLOW permits}, {@code REDELIVER ids}, {@code SEND messages}), with the {@code dispatched entries}; each
     * call of the supplier reads the counts so far. Only connections made after the first call are counted: a
     * connection reads the broker's interceptor once, as it is made. For the benchmarks' commands per message
     * (docs/benchmarks.md); the counting adds to the broker's work on every command.
     */
    @SuppressWarnings("unchecked")
    public Supplier<Map<String, Long>> countCommands() {
        try {
            return (Supplier<Map<String, Long>>)
                    standalone.getClass().getMethod("countCommands").invoke(standalone);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException("cannot count the broker's commands: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot count the broker's commands", e);
        }
    }

    /** How long {@link #start()} took, in milliseconds. */
    public long startMillis() {
        return startMillis;
    }

    @Override
    public void close() throws Exception {
        if (endpoints != null) {
            RUNNING.remove(endpoints, this);
        }
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        List<Thread> deathWatchers = Thread.getAllStackTraces().keySet().stream()
                .filter(running -> running.getClass().getClassLoader() == loader
                        && running.getName().startsWith("BookieDeathWatcher-"))
                .toList();
        try {
            standalone.close();
            // The bookie's death watcher looks every second, notices the bookie has stopped and shuts the bookie
            // server down again from its uncaught-exception handler. A JVM that exits right after close (the
            // quickstart, settle dev) did that in the middle of its shutdown, and the JVM printed the handler's
            // IllegalThreadStateException (once in a quickstart run under load). Its end, waited for here, is the
            // stop's end.
            for (Thread deathWatcher : deathWatchers) {
                deathWatcher.join(5_000);
            }
        } finally {
            thread.setContextClassLoader(previous);
            loader.close();
            if (!keepData) {
                deleteRecursively(dataDir);
            }
        }
    }

    /**
     * The broker logs through its own Log4j 2 (inside its class loader), at INFO by default: hundreds of lines per
     * start. Keep warnings and errors, or the level in {@code -Dsettle.pulsar.logLevel}. Only the broker's Log4j
     * reads this property; the code under test logs through SLF4J and Logback.
     */
    private static void quietBrokerLogs(Path dataDir) throws IOException {
        // Two libraries of the broker log through java.util.logging, to the console, whatever Log4j says: Jersey's
        // "JAXBContext implementation could not be found" at each web resource, and OpenTelemetry's notices that
        // its autoconfiguration is off and that it was shut down twice. Their warnings are not the broker's.
        for (java.util.logging.Logger logger : JUL_LOGGERS) {
            logger.setLevel(java.util.logging.Level.SEVERE);
        }
        String configured = System.getProperty("log4j2.configurationFile");
        // An earlier broker of this JVM may have set it to a file in its data folder, removed when it closed.
        if (configured != null && Files.exists(Path.of(configured))) {
            return;
        }
        String level = System.getProperty("settle.pulsar.logLevel", "warn");
        // settle dev sends the broker's log to a file of its data folder, and keeps the terminal for its own lines.
        String file = System.getProperty("settle.pulsar.logFile");
        Path config = dataDir.resolve("log4j2.properties");
        // Owner only, as settle dev's whole data folder (issue 40): created 0600 before anything is written to it.
        if (Files.getFileAttributeView(dataDir, java.nio.file.attribute.PosixFileAttributeView.class) != null) {
            Files.deleteIfExists(config);
            Files.createFile(
                    config,
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        }
        Files.writeString(
                config,
                String.join(
                        "\n",
                        "status = error",
                        file == null ? "appender.console.type = Console" : "appender.console.type = File",
                        file == null ? "" : "appender.console.fileName = " + file.replace("\\", "/"),
                        "appender.console.name = console",
                        "appender.console.layout.type = PatternLayout",
                        "appender.console.layout.pattern = %d{HH:mm:ss.SSS} [pulsar-broker] %-5level %logger{1} - %msg%n",
                        "rootLogger.level = " + level,
                        "rootLogger.appenderRef.console.ref = console",
                        // The standalone's bookie shuts its sync thread down before flushing through it, and logs the
                        // RejectedExecutionException as an error at every stop: a known, harmless race of the
                        // standalone.
                        "logger.bookieShutdown.name = org.apache.bookkeeper.bookie.BookieImpl",
                        "logger.bookieShutdown.level = fatal",
                        "logger.bookieThread.name = org.apache.bookkeeper.bookie.BookieThread",
                        "logger.bookieThread.level = fatal",
                        // At every fresh start the journal logs, as an error, that it has no last mark yet ("this is
                        // okay
                        // if it is the first time starting this bookie"); this bookie always starts fresh.
                        "logger.journal.name = org.apache.bookkeeper.bookie.Journal",
                        "logger.journal.level = fatal",
                        // When a ledger is closed as its topic is unloaded or deleted, the bookie client's metadata
                        // loop may look for it once it is gone and logs BKNoSuchLedgerExistsOnMetadataServerException
                        // with its stack (in 2 quickstart runs of 3): the close has completed, nothing is lost.
                        "logger.metadataLoop.name = org.apache.bookkeeper.client.MetadataUpdateLoop",
                        "logger.metadataLoop.level = fatal",
                        // A bookie client whose metadata is in ZooKeeper (a cluster's broker) warns at each new ledger
                        // that it cannot tell 127.0.0.1's rack, and uses the default one: there is only one.
                        "logger.rack.name = org.apache.bookkeeper.client.TopologyAwareEnsemblePlacementPolicy",
                        "logger.rack.level = error",
                        ""));
        System.setProperty("log4j2.configurationFile", config.toString());
    }

    private static URL[] brokerClassPath() throws IOException, URISyntaxException {
        List<URL> urls = new ArrayList<>();
        // This module's own classes carry IsolatedStandalone; they must be loaded by the broker's loader.
        urls.add(EmbeddedPulsar.class.getProtectionDomain().getCodeSource().getLocation());
        try (InputStream in = EmbeddedPulsar.class.getResourceAsStream("broker.classpath")) {
            if (in == null) {
                throw new IllegalStateException("broker.classpath is missing: build settle-test-broker with Maven");
            }
            String classPath = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            for (String entry : classPath.split(java.io.File.pathSeparator)) {
                Path jar = Path.of(entry);
                if (!Files.exists(jar)) {
                    throw new IllegalStateException(
                            "broker.classpath names " + jar
                                    + ", which is not there: rebuild settle-test-broker against this machine's Maven repository");
                }
                urls.add(toUrl(jar));
            }
        }
        return urls.toArray(URL[]::new);
    }

    private static URL toUrl(Path path) {
        try {
            return path.toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(path.toString(), e);
        }
    }

    static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> {
                try {
                    Files.deleteIfExists(path);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
