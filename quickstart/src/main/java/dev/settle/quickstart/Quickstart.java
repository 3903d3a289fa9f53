package dev.settle.quickstart;

import dev.settle.examples.orders.Order;
import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.testbroker.EmbeddedPulsar;
import dev.settle.testbroker.PulsarEndpoints;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import sun.misc.Signal;

/**
 * The quickstart: a real Pulsar broker in this JVM, Settle running the orders example exactly as
 * {@code examples/orders/orders.yaml} says, and a stream of sample orders that meets every outcome.
 *
 * <p>{@code ./quickstart.sh} runs it; {@code --orders N} sets how many orders, {@code --exit} stops after the
 * summary instead of waiting for Ctrl-C, {@code --port} and {@code --http-port} move the broker from 6650 and 8080
 * (0: a free port).
 */
public final class Quickstart {
    /** From the repository's root (quickstart.sh) or from this module's folder (its integration test). */
    static final Path MANIFEST = Files.exists(Path.of("examples", "orders", "orders.yaml"))
            ? Path.of("examples", "orders", "orders.yaml")
            : Path.of("..", "examples", "orders", "orders.yaml");
    /** The handler JAR the manifest names, relative to its folder: missing until the examples are packaged. */
    private static final String JAR = "../target/settle-examples.jar";

    static final String TOPIC = "persistent://public/default/orders";
    static final String DEAD_LETTERS = "persistent://public/default/orders-dlq";

    /** Held, so the level set on it stays: java.util.logging keeps loggers only weakly. */
    private static final java.util.logging.Logger JERSEY = java.util.logging.Logger.getLogger("org.glassfish.jersey");

    private Quickstart() {}

    public static void main(String[] args) throws Exception {
        // Before any logger exists: the quickstart's own pattern, and the example handler's System.Logger lines
        // (java.util.logging) on one line each.
        System.setProperty("logback.configurationFile", "quickstart-logback.xml");
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tH:%1$tM:%1$tS.%1$tL %4$-5s %5$s%n");
        // The broker's own chatter (host-name lookups, the web service's JAXB notice) is not what a newcomer came
        // to see; its errors still show.
        if (System.getProperty("settle.pulsar.logLevel") == null) {
            System.setProperty("settle.pulsar.logLevel", "error");
        }
        JERSEY.setLevel(java.util.logging.Level.SEVERE);
        int orders = 20;
        boolean exitAfterSummary = false;
        int port = 6650;
        int httpPort = 8080;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--orders") && i + 1 < args.length) {
                orders = Integer.parseInt(args[++i]);
            } else if (args[i].equals("--exit")) {
                exitAfterSummary = true;
            } else if (args[i].equals("--port") && i + 1 < args.length) {
                port = Integer.parseInt(args[++i]);
            } else if (args[i].equals("--http-port") && i + 1 < args.length) {
                httpPort = Integer.parseInt(args[++i]);
            } else {
                System.err.println(
                        "usage: quickstart [--orders N] [--exit] [--port N] [--http-port N] (0: a free port)");
                System.exit(64);
            }
        }
        PrintStream out = System.out;
        CountDownLatch stop = new CountDownLatch(1);
        for (String name : List.of("INT", "TERM")) {
            Signal.handle(new Signal(name), signal -> stop.countDown());
        }
        out.println("== Settle quickstart: starting a real Pulsar broker in this JVM (about 10 s) ...");
        // Pulsar's standard ports, as settle dev and the archetype's settle.yaml use them, so that a handler of one's
        // own runs against this broker with no editing; free ones when they are taken (say, by settle dev).
        boolean taken = !free(port) || !free(httpPort);
        if (taken) {
            out.printf(
                    "== ports %d and %d are not both free (settle dev, or another Pulsar?): this broker takes free"
                            + " ones%n",
                    port, httpPort);
        }
        try (EmbeddedPulsar pulsar = taken ? EmbeddedPulsar.start() : EmbeddedPulsar.startOn(port, httpPort)) {
            out.printf(
                    "== broker up in %.1f s at %s%n",
                    pulsar.startMillis() / 1000.0, pulsar.endpoints().serviceUrl());
            boolean waitForCtrlC = !exitAfterSummary;
            run(pulsar.endpoints(), orders, out, stop, settle -> {
                if (waitForCtrlC) {
                    out.printf(
                            "== still running: curl http://localhost:%d/metrics  (Ctrl-C stops everything)%n",
                            settle.httpPort());
                    await(stop);
                }
            });
            out.println("== Settle has stopped; stopping the broker");
        }
        out.println("== stopped");
        System.exit(0);
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }

    /** What the quickstart does once there is a broker; the integration test runs exactly this. */
    static Summary run(
            PulsarEndpoints pulsar,
            int orders,
            PrintStream out,
            CountDownLatch stop,
            java.util.function.Consumer<Settle> whileUp)
            throws Exception {
        Path jar =
                MANIFEST.toAbsolutePath().normalize().getParent().resolve(JAR).normalize();
        if (!Files.exists(jar)) {
            throw new IllegalStateException(jar + " is missing: build it with ./mvnw -pl examples -am package");
        }
        Deployment deployment = Preflight.check(
                MANIFEST.toAbsolutePath().normalize(),
                Map.of("PULSAR_SERVICE_URL", pulsar.serviceUrl(), "SETTLE_HTTP_PORT", "0"));
        OrderStream stream = OrderStream.of(orders);
        try (PulsarClient client =
                        PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build();
                // The dead-letter topic carries the orders as published, so it is read with the same schema.
                Consumer<Order> deadLetters = client.newConsumer(Schema.JSON(Order.class))
                        .topic(DEAD_LETTERS)
                        .subscriptionName("quickstart-watcher")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .subscribe();
                Deployment running = deployment;
                Settle settle = Settle.start(running, Duration.ofSeconds(20))) {
            out.printf(
                    "== Settle is running %s from %s; metrics at http://localhost:%d/metrics%n",
                    running.handler(running.subscriptions().get(0).name()).className(), jar, settle.httpPort());
            out.printf("== publishing %d orders to %s (each order's id is its key)%n", orders, TOPIC);
            // Schema.JSON of the handler's own Order: the schema Settle subscribed with, chosen from Handler<Order>.
            try (Producer<Order> producer = client.newProducer(Schema.JSON(Order.class))
                    .topic(TOPIC)
                    .enableBatching(false)
                    .create()) {
                for (OrderStream.Sample sample : stream.orders()) {
                    if (stop.getCount() == 0) {
                        break;
                    }
                    producer.newMessage().key(sample.id()).value(sample.order()).send();
                    Thread.sleep(100);
                }
            }
            List<String> dead = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            Summary summary = Summary.read(settle.metrics().registry(), dead);
            while (!stream.isSettled(summary) && System.nanoTime() < deadline && stop.getCount() > 0) {
                Message<Order> letter = deadLetters.receive(200, TimeUnit.MILLISECONDS);
                if (letter != null) {
                    out.printf(
                            "== dead-lettered: order %s after its last attempt: %s%n",
                            letter.getKey(), letter.getValue());
                    dead.add(letter.getKey());
                    deadLetters.acknowledge(letter);
                }
                summary = Summary.read(settle.metrics().registry(), dead);
            }
            out.println(summary.table());
            whileUp.accept(settle);
            return summary;
        }
    }

    private static void await(CountDownLatch stop) {
        try {
            stop.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
