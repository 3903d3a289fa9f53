package dev.settle.testbroker.standalone;

import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.pulsar.PulsarStandaloneStarter;

/**
 * The Pulsar standalone, started inside the broker's own class loader.
 *
 * <p>Only {@code EmbeddedPulsar} touches this class, by reflection, and only through JDK types
 * ({@link Supplier} of the URLs and {@link AutoCloseable}): the broker's ~330 jars (the unshaded Pulsar client
 * among them) never meet the class path of the code under test, which uses the shaded client.
 */
public final class IsolatedStandalone implements Supplier<Map<String, String>>, AutoCloseable {

    /**
     * A lean configuration for a 2-core machine; the same file is read as broker and as bookie configuration.
     * Batch-index acknowledgement is on, so tests can prove how batches settle with it (docs/design.md, "Batches").
     * The transaction coordinator is on, for {@code guarantee: exactly-once} (docs/exactly-once.md): with it the
     * standalone creates the {@code pulsar/system} namespace and the coordinator's assign topic itself at start, and
     * a transaction may acknowledge single messages of a batch because batch-index acknowledgement is on too.
     * Non-transactional consumers and producers behave as without it. A test that needs a cluster without
     * transactions starts a broker of its own with {@code transactionCoordinatorEnabled=false}.
     */
    private static final String CONFIG = String.join(
            "\n",
            "clusterName=standalone",
            "functionsWorkerEnabled=false",
            "webSocketServiceEnabled=false",
            "managedLedgerDefaultEnsembleSize=1",
            "managedLedgerDefaultWriteQuorum=1",
            "managedLedgerDefaultAckQuorum=1",
            "managedLedgerCacheSizeMB=32",
            "numIOThreads=2",
            "numOrderedExecutorThreads=2",
            "numCacheExecutorThreadPoolSize=1",
            "bookkeeperClientNumWorkerThreads=2",
            "brokerShutdownTimeoutMs=5000",
            "allowLoopback=true",
            "listeningInterface=lo",
            "httpServerEnabled=false",
            "journalSyncData=false",
            "journalMaxGroupWaitMSec=1",
            "journalPreAllocSizeMB=4",
            "journalWriteBufferSizeKB=64",
            "dbStorage_writeCacheMaxSizeMb=16",
            "dbStorage_readAheadCacheMaxSizeMb=16",
            "diskUsageThreshold=0.99",
            "diskUsageWarnThreshold=0.98",
            "numAddWorkerThreads=1",
            "numReadWorkerThreads=2",
            "acknowledgmentAtBatchIndexLevelEnabled=true",
            "transactionCoordinatorEnabled=true",
            "systemTopicEnabled=true",
            "");

    /**
     * What a cluster's brokers add: one thread replays the transaction buffers and pending acknowledgements of the
     * topics a broker takes over. The topics of one namespace rebuild their buffers through one shared snapshot
     * reader; at the default (a thread per core) a topic taken over with three others timed out reading it (30 s), its
     * end of a transaction failed, and the 4.2.4 coordinator left that transaction committing for ever, holding its
     * inputs (docs/exactly-once.md, "What it needs": 1 of 3 cluster restarts, none of 15 with one thread).
     */
    private static final String CLUSTER_CONFIG = "numTransactionReplayThreadPoolSize=1\n";

    private final Starter starter;
    /** Set by {@link #countCommands()}. Guarded by this. */
    private CommandCounter commands;

    private IsolatedStandalone(Starter starter) {
        this.starter = starter;
    }

    /**
     * Starts a standalone whose data lives under {@code dataDir}; called reflectively. {@code extra} holds broker
     * configuration properties written after the lean defaults (so they win), such as authentication or TLS.
     */
    public static IsolatedStandalone start(String dataDir, Map<String, String> extra) throws Exception {
        return launch(Path.of(dataDir), extra, null, "127.0.0.1", 0, 0, 0);
    }

    /** As {@link #start}, on the given broker and web service ports (0: a free one); called reflectively. */
    public static IsolatedStandalone startOn(String dataDir, int brokerPort, int webPort) throws Exception {
        return launch(Path.of(dataDir), Map.of(), null, "127.0.0.1", brokerPort, webPort, 0);
    }

    /**
     * Starts a standalone that keeps its data across restarts; called reflectively. The bookie's journal and
     * ledgers stay under {@code dataDir/bookkeeper} and the metadata in a RocksDB store under
     * {@code dataDir/metadata} (the standalone's own default store), and nothing is wiped at start, so a second start
     * on the same folder finds the topics, messages and cursors of the first. The ports are fixed because the bookie
     * is known by its address in the ledgers' metadata and clients reconnect to the address they had.
     */
    public static IsolatedStandalone startDurable(
            String dataDir, String address, int brokerPort, int webPort, int bookiePort) throws Exception {
        Path data = Path.of(dataDir);
        return launch(
                data,
                Map.of(),
                "rocksdb://" + data.resolve("metadata").toAbsolutePath(),
                address,
                brokerPort,
                webPort,
                bookiePort);
    }

    /**
     * Starts the store of a cluster of brokers, each in a process of its own; called reflectively: ZooKeeper on
     * {@code zookeeperPort} and one bookie, no broker, their data kept under {@code dataDir} across restarts. A
     * broker started with {@link #startClusterBroker} on the same ZooKeeper port joins the cluster. ZooKeeper, not the
     * standalone's RocksDB store, because the brokers' processes must share it.
     */
    public static IsolatedStandalone startClusterStore(String dataDir, int zookeeperPort, int bookiePort)
            throws Exception {
        return launchClusterPart(Path.of(dataDir), "--no-broker", "127.0.0.1", zookeeperPort, 0, 0, bookiePort);
    }

    /**
     * Starts one broker of a cluster whose store {@link #startClusterStore} started; called reflectively. Several
     * such brokers, each in a process of its own on ports of its own, share the store's topics and its transaction
     * coordinator, and a topic served by one that stops is taken over by another, as in production.
     */
    public static IsolatedStandalone startClusterBroker(
            String dataDir, String address, int zookeeperPort, int brokerPort, int webPort) throws Exception {
        return launchClusterPart(Path.of(dataDir), "--only-broker", address, zookeeperPort, brokerPort, webPort, 0);
    }

    private static IsolatedStandalone launchClusterPart(
            Path data, String part, String address, int zookeeperPort, int brokerPort, int webPort, int bookiePort)
            throws Exception {
        Path conf = data.resolve("standalone.conf");
        Files.writeString(conf, CONFIG + CLUSTER_CONFIG);
        // An existing ZooKeeper folder is what puts the standalone in ZooKeeper mode: the store runs ZooKeeper in it,
        // and a broker takes the metadata store URL zk:localhost:<port> from it.
        Path zookeeper = Files.createDirectories(data.resolve("zookeeper"));
        Starter starter = new Starter(new String[] {
            "-c",
            conf.toString(),
            part,
            "--no-functions-worker",
            "--no-stream-storage",
            "--num-bookies",
            "1",
            "--bookkeeper-port",
            Integer.toString(bookiePort),
            "--bookkeeper-dir",
            data.resolve("bookkeeper").toString(),
            "--zookeeper-port",
            Integer.toString(zookeeperPort),
            "--zookeeper-dir",
            zookeeper.toString(),
            "--advertised-address",
            address
        });
        starter.setConfig(ClusterBrokerConfiguration.of(starter.getConfig()));
        return serve(starter, address, brokerPort, webPort);
    }

    /**
     * A broker's configuration that stays a cluster's, not a standalone's, whatever the starter sets. A standalone
     * advertising a loopback address answers a lookup with "connect through the service URL you used", so a client
     * that asked one broker of a cluster for a topic another one owns would be sent back to the first, which refuses
     * it ("not served by this instance"), for ever.
     */
    private static final class ClusterBrokerConfiguration extends org.apache.pulsar.broker.ServiceConfiguration {
        static ClusterBrokerConfiguration of(org.apache.pulsar.broker.ServiceConfiguration read)
                throws IllegalAccessException {
            ClusterBrokerConfiguration copy = new ClusterBrokerConfiguration();
            for (Field field : org.apache.pulsar.broker.ServiceConfiguration.class.getDeclaredFields()) {
                if (!java.lang.reflect.Modifier.isStatic(field.getModifiers())) {
                    field.setAccessible(true);
                    field.set(copy, field.get(read));
                }
            }
            return copy;
        }

        @Override
        public void setRunningStandalone(boolean runningStandalone) {
            // Never a standalone: see the class comment.
        }
    }

    /** @param durableMetadata the metadata store URL that survives a restart; null for a fresh, wiped standalone */
    private static IsolatedStandalone launch(
            Path data,
            Map<String, String> extra,
            String durableMetadata,
            String address,
            int brokerPort,
            int webPort,
            int bookiePort)
            throws Exception {
        Path conf = data.resolve("standalone.conf");
        StringBuilder config = new StringBuilder(CONFIG);
        extra.forEach(
                (key, value) -> config.append(key).append('=').append(value).append('\n'));
        Files.writeString(conf, config);
        // The metadata store name must not be "local": memory:local is private to one store instance and
        // the bookie would be invisible to the broker. The ZooKeeper folder must not exist, or the standalone
        // silently switches to ZooKeeper mode.
        java.util.List<String> args = new java.util.ArrayList<>(java.util.List.of(
                "-c",
                conf.toString(),
                "--no-functions-worker",
                "--no-stream-storage",
                "--num-bookies",
                "1",
                "--bookkeeper-port",
                Integer.toString(bookiePort),
                "--bookkeeper-dir",
                data.resolve("bookkeeper").toString(),
                "--metadata-dir",
                data.resolve("metadata").toString(),
                "--zookeeper-dir",
                data.resolve("no-zookeeper").toString(),
                "--advertised-address",
                address,
                "--metadata-url",
                durableMetadata == null ? "memory:settle-test-broker" : durableMetadata));
        if (durableMetadata == null) {
            args.add(2, "--wipe-data");
        }
        Starter starter = new Starter(args.toArray(String[]::new));
        return serve(starter, address, brokerPort, webPort);
    }

    /** Starts {@code starter} bound to and advertising {@code address}, on the given ports (0: a free one). */
    private static IsolatedStandalone serve(Starter starter, String address, int brokerPort, int webPort)
            throws Exception {
        starter.getConfig().setBrokerServicePort(Optional.of(brokerPort));
        starter.getConfig().setWebServicePort(Optional.of(webPort));
        starter.getConfig().setBindAddress(address);
        starter.getConfig().setAdvertisedAddress(address);
        starter.start();
        return new IsolatedStandalone(starter);
    }

    @Override
    public Map<String, String> get() {
        Map<String, String> urls = new HashMap<>();
        if (starter.isNoBroker()) {
            // A cluster's store: no broker to reach.
            return urls;
        }
        urls.put("serviceUrl", starter.getBrokerServiceUrl());
        urls.put("adminUrl", starter.getWebServiceUrl());
        String tls = serviceUrlTls();
        if (tls != null) {
            urls.put("serviceUrlTls", tls);
        }
        return urls;
    }

    /**
     * Counts the commands clients send this broker from now on ({@link CommandCounter}); called reflectively. A
     * connection reads the broker's interceptor once, as it is made ({@code ServerCnx}'s constructor), so only
     * connections made after this call are counted. A second call returns the same counter.
     */
    public synchronized Supplier<Map<String, Long>> countCommands() {
        if (commands == null) {
            CommandCounter counter = new CommandCounter();
            broker().getBrokerService().setInterceptor(counter);
            commands = counter;
        }
        return commands;
    }

    /**
     * The TLS URL, null when no TLS port is configured. The standalone exposes only the plain URL, and the TLS port
     * is a free one chosen at start, so it is read from the broker it keeps in a package-private field.
     */
    private String serviceUrlTls() {
        return broker().getBrokerServiceUrlTls();
    }

    /** The standalone's broker, which it keeps in a package-private field. */
    private org.apache.pulsar.broker.PulsarService broker() {
        try {
            Field field = org.apache.pulsar.PulsarStandalone.class.getDeclaredField("broker");
            field.setAccessible(true);
            return (org.apache.pulsar.broker.PulsarService) field.get(starter);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read the standalone's broker", e);
        }
    }

    @Override
    public void close() {
        // What a stopping broker logs is about its own shutdown: its internal clients refused with "pulsar service
        // is not ready", a bookie flushing through a closed thread. None of it concerns the code under test, and the
        // quickstart's last line must stay its own, so the broker's log is off from here on.
        org.apache.logging.log4j.core.config.Configurator.setAllLevels(
                org.apache.logging.log4j.LogManager.ROOT_LOGGER_NAME, org.apache.logging.log4j.Level.OFF);
        starter.close();
    }

    /** The standard starter, except that it neither exits the JVM nor registers a shutdown hook of its own. */
    private static final class Starter extends PulsarStandaloneStarter {
        Starter(String[] args) throws Exception {
            super(args);
        }

        @Override
        protected void exit(int status) {
            throw new IllegalStateException("the Pulsar standalone gave up with exit status " + status);
        }

        @Override
        protected void registerShutdownHook() {
            // EmbeddedPulsar closes the broker itself; two hooks closing it at once is a known pitfall.
        }
    }
}
