package dev.settle.runtime.live;

import dev.settle.runtime.manifest.PulsarSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.ProducerAccessMode;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TableView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The two topics of {@code admin.codeStore: pulsar} (docs/live-code.md, "Where code is kept"), both keyed and meant
 * to be compacted: {@code persistent://<codeNamespace>/settle-code} holds each subscription's state (which generation
 * every runtime is to run, the kept ones, who changed it and when), and {@code settle-code-instances} what each
 * runtime runs ({@link Report}). Both are read with a {@link TableView}, so a runtime that starts later reads the
 * latest of each key. A record is {@link Properties} text, the format of the disk's state file.
 *
 * <p>Thread-safe. Owns its own client: it is read before the runtime's client exists, and outlives no runtime.
 */
public final class FleetRecords implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FleetRecords.class);

    /**
     * What one runtime says it runs for one subscription; {@code problem} is why it does not run the desired one.
     * {@code malformed} says why a report could not be read (a report written by something else than a runtime):
     * then only its subscription and instance, taken from the record's key, are known.
     */
    public record Report(
            String subscription,
            String instance,
            int generation,
            String sha256,
            Optional<String> problem,
            Instant at,
            Optional<String> malformed) {
        static Report malformed(String subscription, String instance, String why) {
            return new Report(subscription, instance, 0, "", Optional.empty(), Instant.EPOCH, Optional.of(why));
        }
    }

    /** A subscription's state with who changed it and when. */
    public record Desired(CodeStore.State state, String by, Instant at) {}

    /** How long a write waits for the writer before it (another upload's write) to finish. */
    private static final Duration FENCE_WAIT = Duration.ofSeconds(30);

    private final PulsarClient client;
    private final TableView<byte[]> desired;
    private final TableView<byte[]> reports;
    /** {@code settle-code}: written through a fence of its own each time ({@link #write}), never a shared producer. */
    private final String desiredTopic;

    private final Producer<byte[]> reportWriter;
    private final String instance;

    /** Reads {@link #desiredTopic} under the fence ({@link #latestUnderFence}); made at the first write. */
    private final Object fenceLock = new Object();

    private Reader<byte[]> fenceReader;
    /** The latest record of each key {@link #fenceReader} has read. Guarded by {@link #fenceLock}. */
    private final Map<String, byte[]> fenceRead = new HashMap<>();

    private FleetRecords(
            PulsarClient client,
            TableView<byte[]> desired,
            TableView<byte[]> reports,
            String desiredTopic,
            Producer<byte[]> reportWriter,
            String instance) {
        this.client = client;
        this.desired = desired;
        this.reports = reports;
        this.desiredTopic = desiredTopic;
        this.reportWriter = reportWriter;
        this.instance = instance;
    }

    /**
     * Connects and reads both topics to their end.
     *
     * @param clients makes the client of the records, from the manifest's {@code pulsar:} (the runtime's own way)
     * @param instance this runtime's name in its reports
     * @throws IOException when the broker cannot be reached within 30 s, saying which topic
     */
    public static FleetRecords open(Clients clients, PulsarSettings pulsar, String namespace, String instance)
            throws IOException {
        PulsarClient client = clients.create(pulsar);
        String topic = "persistent://" + namespace + "/settle-code";
        try {
            TableView<byte[]> desired =
                    client.newTableView(Schema.BYTES).topic(topic).createAsync().get(30, TimeUnit.SECONDS);
            TableView<byte[]> reports = client.newTableView(Schema.BYTES)
                    .topic(topic + "-instances")
                    .createAsync()
                    .get(30, TimeUnit.SECONDS);
            // Unbatched: a record is one entry, and compaction keeps the last of each key.
            Producer<byte[]> reportWriter = client.newProducer(Schema.BYTES)
                    .topic(topic + "-instances")
                    .enableBatching(false)
                    .createAsync()
                    .get(30, TimeUnit.SECONDS);
            return new FleetRecords(client, desired, reports, topic, reportWriter, instance);
        } catch (Exception e) {
            client.closeAsync();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException(
                    "admin.codeStore is pulsar, but " + topic + " and " + topic
                            + "-instances cannot be read or written ("
                            + e + "); check that the broker is up and that the manifest's pulsar.authentication may"
                            + " produce and consume in " + namespace,
                    e);
        }
    }

    /** How a client is made from the manifest's {@code pulsar:} settings: passed in, as it is the runtime's. */
    public interface Clients {
        PulsarClient create(PulsarSettings settings) throws PulsarClientException;
    }

    public String instance() {
        return instance;
    }

    /** A generation record that cannot be used: a field is missing or malformed ({@link CodeStore.State#of}). */
    public static final class MalformedRecordException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        MalformedRecordException(String message) {
            super(message);
        }
    }

    /**
     * The latest state of a subscription, or empty when none was ever written.
     *
     * @throws MalformedRecordException when the latest record is malformed, naming the field
     */
    public Optional<Desired> desired(String subscription) {
        byte[] value = desired.get(subscription);
        if (value == null || value.length == 0) {
            return Optional.empty();
        }
        try {
            return Optional.of(readDesired(value));
        } catch (IllegalArgumentException malformed) {
            throw new MalformedRecordException("the generation record of subscription '" + subscription + "' in "
                    + desiredTopic + " is malformed: " + malformed.getMessage()
                    + "; nothing of it is used: deploy again to write a good one");
        }
    }

    /** As {@link #desired}, empty when the latest record is malformed (refused and logged as it came in). */
    Optional<Desired> latestReadable(String subscription) {
        try {
            return desired(subscription);
        } catch (MalformedRecordException malformed) {
            return Optional.empty();
        }
    }

    /**
     * Calls {@code listener} with each subscription's latest state, then with each state written from now on (on the
     * client's thread: hand it on). The latest first: a record written after a runtime read the store at start and
     * before it listens is not missed.
     */
    void listen(BiConsumer<String, Desired> listener) {
        desired.forEachAndListen((key, value) -> {
            if (value == null || value.length == 0) {
                return;
            }
            Desired read;
            try {
                read = readDesired(value);
            } catch (RuntimeException e) {
                log.error(
                        "the generation record of subscription '{}' in {} cannot be read ({}); it is ignored: deploy"
                                + " again to write a good one",
                        key,
                        desiredTopic,
                        e.toString());
                return;
            }
            listener.accept(key, read);
        });
    }

    /**
     * Writes a subscription's new state, made from {@code basis}, and waits until the broker has it; refused when
     * another record was written since (issue 41). The writer is fenced: it takes the topic's one exclusive producer
     * (waiting up to 30 s for another writer's turn to end), reads the topic to its end, and writes only if the
     * subscription's latest record is still at {@code basis}'s generations and ramp ({@link #unchangedSince}). So two
     * uploads through two runtimes, or one through a runtime that has not read the other's record yet, never take the
     * same generation number, and two runtimes never both write a ramp's next step: the second is refused, naming
     * the record it lost to.
     *
     * @param basis the state the change was made from; empty when there was none
     * @throws GenerationConflictException when the latest record is no longer at {@code basis}'s generations or ramp
     * @throws IOException when the record cannot be read or written; nothing was written
     */
    public void write(
            String subscription, Optional<CodeStore.State> basis, CodeStore.State state, String by, Instant at)
            throws IOException {
        Properties properties = state.properties();
        properties.setProperty("by", by);
        properties.setProperty("at", at.toString());
        Producer<byte[]> fenced = null;
        try {
            // Unbatched: a record is one entry, and compaction keeps the last of each key. WaitForExclusive: one
            // writer at a time, any runtime's or command's, each after the previous one's record is in the topic.
            fenced = client.newProducer(Schema.BYTES)
                    .topic(desiredTopic)
                    .enableBatching(false)
                    .accessMode(ProducerAccessMode.WaitForExclusive)
                    .createAsync()
                    .get(FENCE_WAIT.toSeconds(), TimeUnit.SECONDS);
            // No one else can write now: read to the end, so the latest record is the one to compare with.
            Optional<Desired> latest = latestUnderFence(subscription);
            if (!unchangedSince(latest.map(Desired::state), basis)) {
                throw new GenerationConflictException(subscription, latest.orElseThrow(), basis);
            }
            fenced.newMessage().key(subscription).value(bytes(properties)).send();
        } catch (GenerationConflictException e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IOException(
                    "cannot write the generation record of subscription '" + subscription + "' to " + desiredTopic
                            + " (" + e + "); nothing changed: try again (every runtime and settle command writing"
                            + " to it must be of this version or later: an older one's producer keeps others out)",
                    e);
        } finally {
            if (fenced != null) {
                fenced.closeAsync();
            }
        }
    }

    /**
     * The subscription's latest record, read to the topic's end on this thread. Not the table view: its refresh can
     * complete while the last record is still being applied (apache/pulsar#26566), and then two writers, one after
     * the other, both saw the record before theirs and took the same generation (FleetUploadRaceIT, one round in
     * twenty, on a loaded machine).
     */
    private Optional<Desired> latestUnderFence(String subscription) throws PulsarClientException {
        synchronized (fenceLock) {
            if (fenceReader == null) {
                fenceReader = client.newReader(Schema.BYTES)
                        .topic(desiredTopic)
                        .startMessageId(MessageId.earliest)
                        .readCompacted(true)
                        .create();
            }
            while (fenceReader.hasMessageAvailable()) {
                Message<byte[]> record = fenceReader.readNext((int) FENCE_WAIT.toSeconds(), TimeUnit.SECONDS);
                if (record == null) {
                    throw new PulsarClientException.TimeoutException(desiredTopic
                            + " says it has more records, and none came in " + FENCE_WAIT.toSeconds() + " s");
                }
                if (record.hasKey()) {
                    fenceRead.put(record.getKey(), record.getValue());
                }
            }
            byte[] value = fenceRead.get(subscription);
            if (value == null || value.length == 0) {
                return Optional.empty();
            }
            try {
                return Optional.of(readDesired(value));
            } catch (IllegalArgumentException malformed) {
                throw new MalformedRecordException("the generation record of subscription '" + subscription
                        + "' in " + desiredTopic + " is malformed: " + malformed.getMessage()
                        + "; nothing of it is used: deploy again to write a good one");
            }
        }
    }

    /**
     * Whether the latest record is still the one a change was made from: the same active generation, the same highest
     * number, and the same ramp (its step, when the step started, its status). The ramp is part of the fence because
     * every runtime judges a ramp and may write its next step or its end: two runtimes writing the same step at once
     * both saw the same generations, and without the ramp compared the second write went through too (a step started
     * twice, or a rollback overwritten by a step judged on older counts). Now the second loses and follows the record.
     */
    static boolean unchangedSince(Optional<CodeStore.State> latest, Optional<CodeStore.State> basis) {
        if (latest.isEmpty() || basis.isEmpty()) {
            return latest.isEmpty() && basis.isEmpty();
        }
        return latest.get().active() == basis.get().active()
                && latest.get().highest() == basis.get().highest()
                && latest.get().ramp().equals(basis.get().ramp());
    }

    /** Says what this runtime runs, in the background (a report lost is made again at the next change). */
    void report(String subscription, int generation, String sha256, Optional<String> problem, Instant at) {
        Properties properties = new Properties();
        properties.setProperty("subscription", subscription);
        properties.setProperty("instance", instance);
        properties.setProperty("generation", Integer.toString(generation));
        properties.setProperty("sha256", sha256);
        problem.ifPresent(text -> properties.setProperty("problem", text));
        properties.setProperty("at", at.toString());
        reportWriter
                .newMessage()
                .key(reportKey(subscription))
                .value(bytes(properties))
                .sendAsync();
    }

    /** This runtime's reports, taken back as it stops (an empty value: a tombstone for compaction). */
    void leave(List<String> subscriptions) {
        for (String subscription : subscriptions) {
            try {
                reportWriter
                        .newMessage()
                        .key(reportKey(subscription))
                        .value(new byte[0])
                        .sendAsync()
                        .get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                    return;
                }
                // A runtime that cannot take its report back is shown with the time of its last one.
            }
        }
    }

    /**
     * Every runtime's report for a subscription, by instance name; a report that cannot be read is in the list as
     * {@link Report#malformed}, so {@code settle status} shows the others and says what was wrong with it.
     */
    public List<Report> reports(String subscription) {
        String keyPrefix = subscription + "\n";
        List<Report> found = new ArrayList<>();
        for (Map.Entry<String, byte[]> entry : reports.entrySet()) {
            byte[] value = entry.getValue();
            if (value == null || value.length == 0) {
                continue;
            }
            String key = entry.getKey() == null ? "" : entry.getKey();
            try {
                Report report = readReport(value);
                if (report.subscription().equals(subscription)) {
                    found.add(report);
                }
            } catch (IllegalArgumentException malformed) {
                if (key.startsWith(keyPrefix)) {
                    found.add(
                            Report.malformed(subscription, key.substring(keyPrefix.length()), malformed.getMessage()));
                }
            }
        }
        found.sort(Comparator.comparing(Report::instance));
        return List.copyOf(found);
    }

    private String reportKey(String subscription) {
        return subscription + "\n" + instance;
    }

    private static byte[] bytes(Properties properties) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            properties.store(out, null);
        } catch (IOException e) {
            throw new IllegalStateException("a byte array cannot fail", e);
        }
        return out.toByteArray();
    }

    private static Properties properties(byte[] value) {
        Properties properties = new Properties();
        try {
            properties.load(new StringReader(new String(value, StandardCharsets.ISO_8859_1)));
        } catch (IOException e) {
            throw new IllegalStateException("a string cannot fail", e);
        }
        return properties;
    }

    /** @throws IllegalArgumentException naming the first field missing or malformed ({@link CodeStore.State#of}) */
    private static Desired readDesired(byte[] value) {
        Properties properties = properties(value);
        return new Desired(
                CodeStore.State.of(properties),
                properties.getProperty("by", "?"),
                CodeStore.State.instant("at", properties.getProperty("at", Instant.EPOCH.toString())));
    }

    /** @throws IllegalArgumentException naming the first field missing or malformed */
    private static Report readReport(byte[] value) {
        Properties properties = properties(value);
        String subscription = properties.getProperty("subscription");
        String instance = properties.getProperty("instance");
        if (subscription == null || instance == null) {
            throw new IllegalArgumentException("subscription and instance must be set, were "
                    + (subscription == null ? "missing" : "set") + " and " + (instance == null ? "missing" : "set"));
        }
        return new Report(
                subscription,
                instance,
                RecordChecks.generation("generation", properties.getProperty("generation")),
                RecordChecks.sha256OrEmpty("sha256", properties.getProperty("sha256")),
                Optional.ofNullable(properties.getProperty("problem")),
                CodeStore.State.instant("at", properties.getProperty("at")),
                Optional.empty());
    }

    @Override
    public void close() {
        synchronized (fenceLock) {
            if (fenceReader != null) {
                fenceReader.closeAsync();
            }
        }
        desired.closeAsync();
        reports.closeAsync();
        reportWriter.closeAsync();
        client.closeAsync();
    }
}
