package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.SystemTime;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import dev.settle.testbroker.PulsarEndpoints;
import dev.settle.testbroker.TestClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;

/** A client, an admin, a timer and the drivers of one test, closed together. */
final class DriverFixture implements AutoCloseable {
    private static final AtomicInteger topics = new AtomicInteger();

    final PulsarClient client;
    final PulsarAdmin admin;
    final SystemTime time = new SystemTime();
    private final List<SubscriptionDriver> drivers = new ArrayList<>();
    private final String serviceUrl;
    private final List<PulsarClient> otherClients = new ArrayList<>();

    DriverFixture(PulsarEndpoints pulsar) throws Exception {
        serviceUrl = pulsar.serviceUrl();
        client = TestClients.build(PulsarClient.builder().serviceUrl(serviceUrl));
        admin = PulsarAdmin.builder().serviceHttpUrl(pulsar.adminUrl()).build();
    }

    static String topic(String name) {
        return "persistent://public/default/" + name + "-" + topics.incrementAndGet() + "-" + System.nanoTime();
    }

    /** A subscription named "sub" of {@code topic}, every other setting at its default, to change and build. */
    static SubscriptionSpec.Builder spec(String topic, SubscriptionKind type) {
        return SubscriptionSpec.builder("sub", List.of(topic)).type(type);
    }

    /** Starts a driver whose handler records each delivery in {@code seen} and answers with {@code decide}. */
    SubscriptionDriver start(
            SubscriptionSpec spec,
            BlockingQueue<Seen> seen,
            Function<Delivery<String>, Outcome> decide,
            DriverMetrics metrics)
            throws Exception {
        Handler<String> handler = delivery -> {
            seen.add(Seen.of(delivery));
            return decide.apply(delivery);
        };
        return start(spec, handler, String.class, metrics);
    }

    <T> SubscriptionDriver start(SubscriptionSpec spec, Handler<T> handler, Class<T> type, DriverMetrics metrics)
            throws Exception {
        return start(spec, SdkHandlerPort.of(handler, type, spec), metrics);
    }

    SubscriptionDriver start(SubscriptionSpec spec, HandlerPort port, DriverMetrics metrics) {
        return start(client, spec, port, metrics);
    }

    /** Starts a driver connected to what {@code wiring} holds (tracing, a journal). */
    SubscriptionDriver start(SubscriptionSpec spec, HandlerPort port, DriverMetrics metrics, DriverWiring wiring) {
        SubscriptionDriver driver = SubscriptionDriver.start(client, spec, port, port.schema(), time, metrics, wiring);
        drivers.add(driver);
        return driver;
    }

    /** Starts a driver on another client of this fixture's ({@link #clientWithOneNetworkThread()}). */
    SubscriptionDriver start(PulsarClient on, SubscriptionSpec spec, HandlerPort port, DriverMetrics metrics) {
        SubscriptionDriver driver = SubscriptionDriver.start(on, spec, port, time, metrics);
        drivers.add(driver);
        return driver;
    }

    /**
     * A client whose every connection is served by one network thread, closed with the fixture: anything that waits
     * on that thread for an answer from the broker waits until the operation timeout (30 s), every time, where the
     * default two threads make it a matter of which connection landed on which thread.
     */
    PulsarClient clientWithOneNetworkThread() throws Exception {
        PulsarClient one =
                TestClients.build(PulsarClient.builder().serviceUrl(serviceUrl).ioThreads(1));
        otherClients.add(one);
        return one;
    }

    void stop(SubscriptionDriver driver) {
        if (drivers.remove(driver)) {
            driver.stop(Duration.ofSeconds(5));
        }
    }

    MessageId send(String topic, String value, String key, Map<String, String> properties) throws Exception {
        try (Producer<String> producer = client.newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            var builder = producer.newMessage().value(value).properties(properties);
            if (key != null) {
                builder.key(key);
            }
            return builder.send();
        }
    }

    long backlog(String topic, String subscription) throws Exception {
        return admin.topics()
                .getStats(topic)
                .getSubscriptions()
                .get(subscription)
                .getMsgBacklog();
    }

    /** Every message on {@code topic} from the start, read by a throwaway subscription. */
    List<Message<String>> readAll(String topic, int expected, Duration within) throws Exception {
        return readAll(topic, expected, within, Schema.STRING);
    }

    /** As above, read with {@code schema} ({@code AUTO_CONSUME} takes whatever schema the topic has, or none). */
    <T> List<Message<T>> readAll(String topic, int expected, Duration within, Schema<T> schema) throws Exception {
        List<Message<T>> messages = new ArrayList<>();
        try (Consumer<T> reader = client.newConsumer(schema)
                .topic(topic)
                .subscriptionName("reader-" + System.nanoTime())
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            long deadline = System.nanoTime() + within.toNanos();
            while (messages.size() < expected && System.nanoTime() < deadline) {
                Message<T> message = reader.receive(200, TimeUnit.MILLISECONDS);
                if (message != null) {
                    messages.add(message);
                    reader.acknowledge(message);
                }
            }
            // Anything beyond the expected count would show here.
            Message<T> extra = reader.receive(500, TimeUnit.MILLISECONDS);
            if (extra != null) {
                messages.add(extra);
            }
        }
        return messages;
    }

    static BlockingQueue<Seen> seen() {
        return new LinkedBlockingQueue<>();
    }

    static Seen next(BlockingQueue<Seen> seen, Duration within) throws InterruptedException {
        return seen.poll(within.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() throws Exception {
        for (SubscriptionDriver driver : drivers) {
            driver.stop(Duration.ofSeconds(5));
        }
        time.close();
        admin.close();
        client.close();
        for (PulsarClient other : otherClients) {
            other.close();
        }
    }
}
