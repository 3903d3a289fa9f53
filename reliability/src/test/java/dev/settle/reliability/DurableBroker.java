package dev.settle.reliability;

import static dev.settle.testbroker.SettleProcess.freePort;
import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.DurableBrokerMain;
import dev.settle.testbroker.TestJvm;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A Pulsar standalone in a process of its own ({@link DurableBrokerMain}), its data kept in one folder and its ports
 * fixed, so that it can be stopped and started again under a running runtime and find its topics, messages and
 * cursors.
 */
final class DurableBroker implements AutoCloseable {
    private static final String JVM_ARGS =
            System.getProperty("settle.reliability.brokerJvmArgs", "../test-broker/broker-jvm.args");
    /**
     * A Log4j 2 configuration for the broker instead of its quiet default (warnings only), to follow a run in detail:
     * {@code -Dsettle.reliability.brokerLogConfig=/path/log4j2.properties}.
     */
    private static final String LOG_CONFIG = System.getProperty("settle.reliability.brokerLogConfig");

    private final String address;
    private final int brokerPort;
    private final int webPort;
    /** DurableBrokerMain's arguments. */
    private final List<String> arguments;

    private Process process;

    /** A lone broker: the cluster's only one, with its own bookie and metadata store. */
    DurableBroker(Path data, String address) throws IOException {
        this.address = address;
        this.brokerPort = freePort();
        this.webPort = freePort();
        this.arguments = List.of(
                data.toString(),
                address,
                Integer.toString(brokerPort),
                Integer.toString(webPort),
                Integer.toString(freePort()));
    }

    private DurableBroker(String address, int brokerPort, int webPort, List<String> arguments) {
        this.address = address;
        this.brokerPort = brokerPort;
        this.webPort = webPort;
        this.arguments = arguments;
    }

    /** The store of a cluster of brokers (ZooKeeper and one bookie); it has no URLs of its own. */
    static DurableBroker clusterStore(Path data, int zookeeperPort) throws IOException {
        return new DurableBroker(
                "127.0.0.1",
                0,
                0,
                List.of("store", data.toString(), Integer.toString(zookeeperPort), Integer.toString(freePort())));
    }

    /** One broker of the cluster whose {@link #clusterStore store} listens on {@code zookeeperPort}. */
    static DurableBroker clusterBroker(Path data, String address, int zookeeperPort) throws IOException {
        int brokerPort = freePort();
        int webPort = freePort();
        return new DurableBroker(
                address,
                brokerPort,
                webPort,
                List.of(
                        "broker",
                        data.toString(),
                        address,
                        Integer.toString(zookeeperPort),
                        Integer.toString(brokerPort),
                        Integer.toString(webPort)));
    }

    String serviceUrl() {
        return "pulsar://" + address + ":" + brokerPort;
    }

    String adminUrl() {
        return "http://" + address + ":" + webPort;
    }

    /** Starts the broker and returns once it serves; a start on the folder of an earlier one finds its data. */
    Duration start() throws Exception {
        long started = System.nanoTime();
        List<String> command = new ArrayList<>(List.of(
                "java",
                "-Xmx512m",
                "-XX:MaxDirectMemorySize=256m",
                TestJvm.speedOptions(),
                "@" + Path.of(JVM_ARGS).toAbsolutePath(),
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir")));
        if (LOG_CONFIG != null) {
            command.add("-Dlog4j2.configurationFile=" + Path.of(LOG_CONFIG).toAbsolutePath());
        }
        command.addAll(List.of("-cp", classPath(), DurableBrokerMain.class.getName()));
        command.addAll(arguments);
        process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<Void> ready = new CompletableFuture<>();
        List<String> early = new ArrayList<>();
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader lines = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                            System.out.println("[broker] " + line);
                            if (line.startsWith(DurableBrokerMain.READY)) {
                                ready.complete(null);
                            } else if (!ready.isDone()) {
                                early.add(line);
                            }
                        }
                    } catch (IOException e) {
                        // The process is gone.
                    }
                    ready.completeExceptionally(
                            new IllegalStateException("the broker process ended before it served: " + early));
                },
                "broker-output");
        reader.setDaemon(true);
        reader.start();
        ready.get(180, TimeUnit.SECONDS);
        return Duration.ofNanos(System.nanoTime() - started);
    }

    /** SIGTERM, as an operator's restart sends it; returns once the process is gone. */
    Duration stop() throws InterruptedException {
        long started = System.nanoTime();
        process.toHandle().destroy();
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("the broker stops on SIGTERM")
                .isTrue();
        return Duration.ofNanos(System.nanoTime() - started);
    }

    /** SIGKILL, as a crash or a lost node ends it: no flush, no clean close of the ledgers. */
    Duration kill() throws InterruptedException {
        long started = System.nanoTime();
        process.toHandle().destroyForcibly();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return Duration.ofNanos(System.nanoTime() - started);
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** Where DurableBrokerMain comes from: settle-test-broker, which reads the broker's own class path beside it. */
    private static String classPath() throws URISyntaxException {
        return Path.of(DurableBrokerMain.class
                        .getProtectionDomain()
                        .getCodeSource()
                        .getLocation()
                        .toURI())
                .toString();
    }
}
