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
 */
public final class DurableBrokerMain {
    /** The start of the line printed once the broker serves. */
    public static final String READY = "durable broker ready";

    private DurableBrokerMain() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println(
                    "usage: DurableBrokerMain <data folder> <address> <broker port> <web port> <bookie port>");
            System.exit(64);
        }
        CountDownLatch stop = new CountDownLatch(1);
        for (String name : new String[] {"INT", "TERM"}) {
            Signal.handle(new Signal(name), signal -> stop.countDown());
        }
        try (EmbeddedPulsar pulsar = EmbeddedPulsar.startDurable(
                Path.of(args[0]),
                args[1],
                Integer.parseInt(args[2]),
                Integer.parseInt(args[3]),
                Integer.parseInt(args[4]))) {
            System.out.printf(
                    "%s in %.1f s: %s %s%n",
                    READY,
                    pulsar.startMillis() / 1000.0,
                    pulsar.endpoints().serviceUrl(),
                    pulsar.endpoints().adminUrl());
            stop.await();
            System.out.println("durable broker stopping");
        }
        System.exit(0);
    }
}
