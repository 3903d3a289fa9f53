package dev.settle.testbroker;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;

/**
 * A durable {@link EmbeddedPulsar} as a process of its own, so a test can stop and start the broker under a running
 * runtime (or run it on the other side of a network namespace): {@code DurableBrokerMain <data folder> <address>
 * <broker port> <web port> <bookie port>}. Prints {@value #READY} and the service and admin URLs once it serves, and
 * stops cleanly on SIGTERM or SIGINT; started again on the same folder and ports, it has its topics, messages and
 * cursors back.
 *
 * <p>A cluster of brokers is one store process, {@code DurableBrokerMain store <data folder> <zookeeper port>
 * <bookie port>}, and a process per broker, {@code DurableBrokerMain broker <data folder> <address> <zookeeper port>
 * <broker port> <web port>}, each with a folder of its own; the store prints {@value #READY} and its ZooKeeper URL.
 */
public final class DurableBrokerMain {
    /** The start of the line printed once the broker serves. */
    public static final String READY = "durable broker ready";

    private static final String USAGE = String.join(
            "\n",
            "usage: DurableBrokerMain <data folder> <address> <broker port> <web port> <bookie port>",
            "       DurableBrokerMain store <data folder> <zookeeper port> <bookie port>",
            "       DurableBrokerMain broker <data folder> <address> <zookeeper port> <broker port> <web port>");

    private DurableBrokerMain() {}

    public static void main(String[] args) throws Exception {
        CountDownLatch stop = new CountDownLatch(1);
        for (String name : new String[] {"INT", "TERM"}) {
            Signal.handle(new Signal(name), signal -> stop.countDown());
        }
        try (EmbeddedPulsar pulsar = start(args)) {
            String where = args[0].equals("store")
                    ? "zk:127.0.0.1:" + args[2]
                    : pulsar.endpoints().serviceUrl() + " " + pulsar.endpoints().adminUrl();
            System.out.printf("%s in %.1f s: %s%n", READY, pulsar.startMillis() / 1000.0, where);
            stop.await();
            System.out.println("durable broker stopping");
        }
        System.exit(0);
    }

    private static EmbeddedPulsar start(String[] args) throws Exception {
        if (args.length == 4 && args[0].equals("store")) {
            return EmbeddedPulsar.startClusterStore(
                    Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        }
        if (args.length == 6 && args[0].equals("broker")) {
            return EmbeddedPulsar.startClusterBroker(
                    Path.of(args[1]),
                    args[2],
                    Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]),
                    Integer.parseInt(args[5]));
        }
        if (args.length == 5) {
            return EmbeddedPulsar.startDurable(
                    Path.of(args[0]),
                    args[1],
                    Integer.parseInt(args[2]),
                    Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]));
        }
        System.err.println(USAGE);
        System.exit(64);
        throw new AssertionError("exited");
    }
}
