package dev.settle.testbroker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What an integration test against a real broker needs, in one extension: the broker, a client and an admin on it,
 * names of its own for topics and subscriptions, a {@link Manifest} on that broker, {@code settle run} processes and
 * whatever else it started (closed at its end, last started first, then the client and admin), and waits with a
 * deadline that say what they last saw ({@link #await}).
 *
 * <pre>{@code
 * @RegisterExtension
 * final PulsarFixture pulsar = PulsarFixture.shared();
 * }</pre>
 *
 * <p>{@link #shared()} is the broker every test class of the JVM shares ({@link PulsarBroker}: embedded, given by URL
 * or a container; package management on). A class that needs a broker unlike it (authentication, transactions off)
 * takes {@link #ownBroker}: one started for the class and stopped after it. Registered on an instance field, the
 * client and admin are the test's; on a static field, what a {@code @BeforeAll} method opens or starts lasts until
 * the class ends. The client and admin need {@code pulsar-client} and {@code pulsar-client-admin} on the test's
 * class path (provided scope here: the broker's own class path must not get the shaded client).
 */
public final class PulsarFixture implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
    static {
        AwaitilityDefaults.apply();
    }

    /** A prefix of this JVM's names, so that two runs on one external broker never share a topic. */
    private static final String RUN = Long.toString(ThreadLocalRandom.current().nextLong(36L * 36 * 36 * 36), 36);

    private static final AtomicLong NAMES = new AtomicLong();
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(PulsarFixture.class);

    private final Map<String, String> brokerConfiguration;
    private PulsarEndpoints endpoints;
    private PulsarClient client;
    private PulsarAdmin admin;
    private Path folder;
    private String label = "settle";
    /** What to close when the current test ends, or (started in a {@code @BeforeAll}) when the class ends. */
    private final List<AutoCloseable> afterTest = new ArrayList<>();

    private final List<AutoCloseable> afterClass = new ArrayList<>();
    private boolean inTest;
    /** Registered on a static field: the client, admin and folder last until the class ends. */
    private boolean classWide;

    private PulsarFixture(Map<String, String> brokerConfiguration) {
        this.brokerConfiguration = brokerConfiguration;
    }

    /** The broker shared by every test class of the JVM. */
    public static PulsarFixture shared() {
        return new PulsarFixture(null);
    }

    /**
     * A broker of the class's own, with {@code configuration} as a {@code broker.conf} would hold it (see
     * {@link EmbeddedPulsar#start(Map)}): started before the class's first test, stopped after its last. It costs a
     * broker start (10-20 s on two cores): use it only for what the shared broker cannot be.
     */
    public static PulsarFixture ownBroker(Map<String, String> configuration) {
        return new PulsarFixture(Map.copyOf(configuration));
    }

    /** The broker settings of package management, with a file-system store in a new temporary folder. */
    public static Map<String, String> packageManagement() {
        try {
            return Map.of(
                    "enablePackagesManagement", "true",
                    "packagesManagementStorageProvider",
                            "org.apache.pulsar.packages.management.storage.filesystem.FileSystemPackagesStorageProvider",
                    "STORAGE_PATH",
                            Files.createTempDirectory("settle-packages-").toString());
        } catch (IOException e) {
            throw new UncheckedIOException("could not make a folder for the broker's package store", e);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        // Only a registration on a static field is called back for the class.
        classWide = true;
        endpoints = broker(context);
        label = context.getRequiredTestClass().getSimpleName();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (endpoints == null) {
            endpoints = broker(context);
        }
        label = context.getRequiredTestMethod().getName();
        inTest = true;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        inTest = false;
        try {
            closeAll(afterTest);
        } finally {
            if (!classWide) {
                closeConnections();
            }
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try {
            closeAll(afterClass);
        } finally {
            closeConnections();
        }
    }

    private PulsarEndpoints broker(ExtensionContext context) {
        if (brokerConfiguration == null) {
            return PulsarBroker.endpoints(context);
        }
        ExtensionContext classContext =
                context.getTestMethod().isPresent() ? context.getParent().orElseThrow() : context;
        String owner = context.getRequiredTestClass().getSimpleName();
        // The class's store closes it (AutoCloseable) when the class ends, after its afterAll methods.
        return classContext
                .getStore(NAMESPACE)
                .getOrComputeIfAbsent("broker", key -> OwnBroker.start(brokerConfiguration, owner), OwnBroker.class)
                .pulsar()
                .endpoints();
    }

    /** A broker of one test class, closed by the class's store. */
    private record OwnBroker(EmbeddedPulsar pulsar, String owner) implements AutoCloseable {
        static OwnBroker start(Map<String, String> configuration, String owner) {
            try {
                EmbeddedPulsar pulsar = EmbeddedPulsar.start(configuration);
                System.out.printf(
                        "[settle-test-broker] a broker of %s's own started in %.1f s at %s%n",
                        owner, pulsar.startMillis() / 1000.0, pulsar.endpoints().serviceUrl());
                return new OwnBroker(pulsar, owner);
            } catch (Exception e) {
                throw new IllegalStateException(
                        "the broker of " + owner + " (" + configuration.keySet() + ") failed to start", e);
            }
        }

        @Override
        public void close() throws Exception {
            pulsar.close();
        }
    }

    public PulsarEndpoints endpoints() {
        if (endpoints == null) {
            throw new IllegalStateException("the broker is not known yet: register PulsarFixture with"
                    + " @RegisterExtension (a static field to use it in @BeforeAll)");
        }
        return endpoints;
    }

    /** A client on the broker, made on first use and closed after the test (or the class, from a {@code @BeforeAll}). */
    public PulsarClient client() {
        if (client == null) {
            try {
                client = TestClients.build(
                        PulsarClient.builder().serviceUrl(endpoints().serviceUrl()));
            } catch (org.apache.pulsar.client.api.PulsarClientException e) {
                throw new IllegalStateException("no client on " + endpoints().serviceUrl(), e);
            }
        }
        return client;
    }

    /** An admin on the broker, made on first use and closed with the client. */
    public PulsarAdmin admin() {
        if (admin == null) {
            try {
                admin = PulsarAdmin.builder()
                        .serviceHttpUrl(endpoints().adminUrl())
                        .build();
            } catch (org.apache.pulsar.client.api.PulsarClientException e) {
                throw new IllegalStateException("no admin on " + endpoints().adminUrl(), e);
            }
        }
        return admin;
    }

    /** {@code persistent://public/default/<name>-<unique>}: a topic no other test of any run uses. */
    public String topic(String name) {
        return "persistent://public/default/" + unique(name);
    }

    /** {@code <name>-<unique>}: a subscription (or any other name) no other test uses. */
    public static String unique(String name) {
        return name + "-" + RUN + "-" + NAMES.incrementAndGet();
    }

    /** A manifest on this broker, its HTTP server on a free port of 127.0.0.1. */
    public Manifest manifest() {
        return new Manifest(endpoints().serviceUrl());
    }

    /**
     * Writes {@code file}, a manifest on this broker with its HTTP server on a free local port, and returns it;
     * {@code rest} is the YAML that follows those two keys ({@code subscriptions:} and any other).
     */
    public Path manifest(Path file, String rest) throws IOException {
        Files.writeString(file, manifestText(endpoints().serviceUrl(), 0, rest));
        return file;
    }

    /**
     * A manifest on the broker at {@code serviceUrl} with its HTTP server on 127.0.0.1 at {@code httpPort} (0: a free
     * port); {@code rest} is the YAML that follows those two keys ({@code subscriptions:} and any other).
     */
    public static String manifestText(String serviceUrl, int httpPort, String rest) {
        return new Manifest(serviceUrl).httpPort(httpPort).text() + rest;
    }

    /** A folder of the test's own (of the class's, from a {@code @BeforeAll}), deleted when it ends. */
    public Path folder() {
        if (folder == null) {
            try {
                folder = Files.createTempDirectory("settle-test-");
            } catch (IOException e) {
                throw new UncheckedIOException("could not make a test folder", e);
            }
        }
        return folder;
    }

    /** {@code settle run <manifest>} as a child process, its output labelled with the test's name; stopped after. */
    public SettleProcess settle(Path manifest) throws IOException {
        return closeAfterTest(SettleProcess.run(manifest, label));
    }

    /** {@code running} (a runtime, a process, a deployment), to be closed when the test (or the class) ends. */
    public <T extends AutoCloseable> T closeAfterTest(T running) {
        (inTest ? afterTest : afterClass).add(running);
        return running;
    }

    /**
     * Waits for {@code probe} to give what {@code done} accepts and returns it; after {@code timeout}, fails with
     * {@code what} and the last answer (see {@link Waits#until}).
     */
    public static <T> T await(String what, Duration timeout, Callable<T> probe, Predicate<? super T> done) {
        return Waits.until(what, timeout, probe, done);
    }

    /** Waits until {@code subscription} of {@code topic} has {@code expected} messages left, printing the last count. */
    public void awaitBacklog(String topic, String subscription, long expected, Duration timeout) {
        await(
                "a backlog of " + expected + " on " + subscription + " of " + topic,
                timeout,
                () -> backlog(topic, subscription),
                backlog -> backlog == expected);
    }

    /**
     * Creates {@code topic} with {@code subscription} from its earliest message, so none is skipped, then publishes
     * {@code count} unbatched messages, {@code value} giving the {@code i}th, and waits until all are stored. Unbatched:
     * a backlog counts entries, and the tests time their steps by it.
     */
    public void backlog(String topic, String subscription, int count, IntFunction<String> value) throws Exception {
        admin().topics().createNonPartitionedTopic(topic);
        admin().topics().createSubscription(topic, subscription, MessageId.earliest);
        publish(topic, count, value);
    }

    /** Publishes {@code count} unbatched messages to {@code topic}, {@code value} giving the {@code i}th; waits until all are stored. */
    public void publish(String topic, int count, IntFunction<String> value) throws Exception {
        try (Producer<String> producer = client().newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            List<CompletableFuture<?>> sends = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sends.add(producer.sendAsync(value.apply(i)));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        }
    }

    /** Publishes {@code values} to {@code topic}, one unbatched message each, and waits until all are stored. */
    public void publish(String topic, String... values) throws Exception {
        publish(topic, values.length, i -> values[i]);
    }

    /** The messages of {@code topic} that {@code subscription} has not acknowledged yet. */
    public long backlog(String topic, String subscription) throws Exception {
        return admin().topics()
                .getStats(topic)
                .getSubscriptions()
                .get(subscription)
                .getMsgBacklog();
    }

    /**
     * Every value of {@code topic} with how often it was read, by a fresh consumer from the start: until
     * {@code expected} distinct values are in (a transaction a kill left open holds back every later message of the
     * topic from readers until the coordinator aborts it at its timeout), then on to the topic's last message as the
     * broker names it then, or until nothing more comes for 5 s. Read it once nothing writes to the topic any more.
     */
    public Map<String, Integer> copies(String topic, int expected) throws Exception {
        Map<String, Integer> copies = new HashMap<>();
        try (Consumer<String> reader = client().newConsumer(Schema.STRING)
                .topic(topic)
                .subscriptionName(unique("reader"))
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .receiverQueueSize(1000)
                .subscribe()) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            MessageId read = null;
            while (copies.size() < expected && System.nanoTime() < deadline) {
                Message<String> message = reader.receive(1, TimeUnit.SECONDS);
                if (message != null) {
                    copies.merge(message.getValue(), 1, Integer::sum);
                    read = message.getMessageId();
                }
            }
            // The rest, copies read twice among them, up to the last message (the read used to end only after 5 s
            // without one: 5 s of every kill test). An end never met (an aborted transaction's message, which no
            // reader is given) ends that way still.
            MessageIdAdv last = lastMessageId(reader);
            boolean atTheEnd = read != null && endsAt(read, last);
            while (!atTheEnd) {
                Message<String> message = reader.receive(5, TimeUnit.SECONDS);
                if (message == null) {
                    break;
                }
                copies.merge(message.getValue(), 1, Integer::sum);
                atTheEnd = endsAt(message.getMessageId(), last);
            }
            System.out.printf(
                    "[settle-test-broker] copies of %s: %d reads, %s%n",
                    topic,
                    copies.values().stream().mapToInt(Integer::intValue).sum(),
                    atTheEnd ? "ended at its last message " + last : "ended after 5 s without one (last " + last + ")");
        }
        return copies;
    }

    /**
     * The last message the broker would give {@code reader} now, or null if it cannot say. Asked of the consumer, not
     * the admin API: the broker then names the last dispatchable message, not a transaction's commit marker after it.
     */
    private static MessageIdAdv lastMessageId(Consumer<String> reader) {
        try {
            List<? extends MessageId> last = reader.getLastMessageIds();
            return last.size() == 1 && last.get(0) instanceof MessageIdAdv id ? id : null;
        } catch (PulsarClientException e) {
            return null;
        }
    }

    /** Whether {@code id} is {@code last}'s entry's last message or past it; never when {@code last} is not known. */
    static boolean endsAt(MessageId id, MessageIdAdv last) {
        if (last == null || !(id instanceof MessageIdAdv at)) {
            return false;
        }
        int order = Long.compare(at.getLedgerId(), last.getLedgerId());
        if (order == 0) {
            order = Long.compare(at.getEntryId(), last.getEntryId());
        }
        // A batch is one entry: its end is its last message, whatever batch index the broker's id names.
        return order > 0 || (order == 0 && (at.getBatchSize() <= 1 || at.getBatchIndex() == at.getBatchSize() - 1));
    }

    /** How many reads of {@code copies} were of a value read before. */
    public static int duplicates(Map<String, Integer> copies) {
        return copies.values().stream().mapToInt(n -> n - 1).sum();
    }

    private static void closeAll(List<AutoCloseable> started) throws Exception {
        // Last started, first closed: a deployment outlives the runtime started from it.
        Exception first = null;
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        started.clear();
        if (first != null) {
            throw first;
        }
    }

    private void closeConnections() throws Exception {
        if (admin != null) {
            admin.close();
            admin = null;
        }
        if (client != null) {
            client.close();
            client = null;
        }
        if (folder != null) {
            try (Stream<Path> paths = Files.walk(folder)) {
                paths.sorted(Comparator.reverseOrder())
                        .forEach(path -> path.toFile().delete());
            }
            folder = null;
        }
    }

    /**
     * Awaitility, by default, fails a wait when any thread of the JVM ends with an uncaught exception. Test classes run
     * four at a time in one JVM, so a runtime thread of one class failed another class's unrelated wait (CI, commit
     * 7b15902). A test that cares about its own threads asserts them (a runtime's fatal error, a future); a stray
     * thread is not every concurrent wait's failure. Applied once, when the first class using the fixture loads it.
     */
    private static final class AwaitilityDefaults {
        static void apply() {
            try {
                Class.forName("org.awaitility.Awaitility", false, PulsarFixture.class.getClassLoader());
            } catch (ClassNotFoundException absent) {
                return;
            }
            org.awaitility.Awaitility.doNotCatchUncaughtExceptionsByDefault();
        }
    }
}
