package dev.settle.quickstart;

import dev.settle.examples.orders.Order;
import dev.settle.testbroker.EmbeddedPulsar;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import sun.misc.Signal;

/**
 * The broker that {@code deploy/image-test.sh} runs the image against: the embedded broker on the loopback, with
 * one order already waiting on {@code persistent://public/default/orders}, published with the JSON schema of the
 * example handler's {@code Order}, which is what the handler subscribes with. Writes the service URL to the file named
 * by its one argument once that order is published, then waits for SIGTERM or SIGINT.
 *
 * <p>The order has sku {@code flaky}, so the example handler logs "Order image-test-1 hit a transient failure" on
 * its first attempt and acknowledges it on the second: the script reads that line as proof that a message was
 * handled inside the container.
 */
public final class BrokerForImageTest {
    static final Order ORDER = new Order("image-test-1", "flaky", 1);

    private BrokerForImageTest() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: BrokerForImageTest <file to write the service URL to>");
            System.exit(64);
        }
        if (System.getProperty("settle.pulsar.logLevel") == null) {
            System.setProperty("settle.pulsar.logLevel", "error");
        }
        CountDownLatch stop = new CountDownLatch(1);
        for (String name : new String[] {"INT", "TERM"}) {
            Signal.handle(new Signal(name), signal -> stop.countDown());
        }
        try (EmbeddedPulsar pulsar = EmbeddedPulsar.start()) {
            String serviceUrl = pulsar.endpoints().serviceUrl();
            try (PulsarClient client =
                            PulsarClient.builder().serviceUrl(serviceUrl).build();
                    Producer<Order> producer = client.newProducer(Schema.JSON(Order.class))
                            .topic(Quickstart.TOPIC)
                            .enableBatching(false)
                            .create()) {
                producer.newMessage().key("image-test-1").value(ORDER).send();
            }
            Path file = Path.of(args[0]);
            Path partial = file.resolveSibling(file.getFileName() + ".partial");
            Files.writeString(partial, serviceUrl + "\n", StandardCharsets.UTF_8);
            // Renamed into place, so the script never reads a half-written file.
            Files.move(partial, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            System.out.printf(
                    "broker up in %.1f s at %s, one order waiting%n", pulsar.startMillis() / 1000.0, serviceUrl);
            stop.await();
        }
        System.exit(0);
    }
}
