package dev.settle.runtime.cli;

import dev.settle.runtime.driver.DeadLetterProperties;
import dev.settle.runtime.driver.MessageCopy;
import dev.settle.runtime.manifest.DeadLetter;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SchemaSerializationException;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code settle dlq replay}: sends dead letters back to their {@code REAL_TOPIC} when it is a topic the subscription
 * consumes ({@link ReplayRules.Targets}), each acknowledged on the replay's own durable subscription only once its
 * copy is stored, so a run killed half-way resumes where it stopped; a letter
 * replayed {@code --max-replays} times goes to the parking topic instead. {@code --dry-run} reads with a reader and
 * changes nothing.
 */
@Command(
        name = "replay",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Send dead letters back to the topic they came from (REAL_TOPIC) with their key and properties and"
                    + " settle.replay.count one higher, only to a topic the subscription consumes; each is"
                    + " acknowledged on the durable subscription '"
                    + DlqReplay.SUBSCRIPTION + "' of the dead-letter topic only once its copy is stored, so a"
                    + " killed run resumes. A letter already replayed --max-replays times goes to the parking topic"
                    + " <deadLetterTopic>-parked instead. Letters --where leaves out, letters with no REAL_TOPIC, and"
                    + " letters whose REAL_TOPIC the subscription does not consume (or is Settle's own), stay"
                    + " unacknowledged and are counted."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:replayed (also when there was nothing to replay)",
            "1:the broker cannot be reached or refused a copy (its words on stderr); what was acknowledged is done",
            "2:the manifest is refused",
            "64:the subscription is not in the manifest or has no deadLetterTopic, or the command line is not"
                    + " understood"
        })
final class DlqReplay extends DlqCommand.Target implements Callable<Integer> {
    /** The replay's own durable subscription on the dead-letter topic. */
    static final String SUBSCRIPTION = "settle-replay";
    /** A run ends once no letter came for this long: the backlog it was started for is done. */
    private static final long QUIET_MILLIS = 2_000;

    @Option(
            names = "--where",
            paramLabel = "KEY=VALUE",
            description = "replay only letters with this stage=STAGE or exception=CLASS; repeat it: one value of each"
                    + " key given must match (stage=none matches the client's letters)")
    List<String> where = new ArrayList<>();

    @Option(names = "--dry-run", description = "say what would be replayed or parked; send and acknowledge nothing")
    boolean dryRun;

    @Option(
            names = "--rate",
            paramLabel = "N/s",
            description = "send at most N letters a second (default: as fast as the broker stores them)")
    String rate;

    @Option(names = "--limit", paramLabel = "N", description = "replay or park at most N letters, then stop")
    Integer limit;

    @Option(
            names = "--max-replays",
            paramLabel = "N",
            defaultValue = "3",
            description = "park a letter already replayed N times (default: ${DEFAULT-VALUE})")
    int maxReplays;

    private ReplayRules rules;
    private long nanosPerLetter;
    /** Letters left because their payload does not fit their topic's schema. */
    private int unfitting;

    @Override
    String name() {
        return "replay";
    }

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        try {
            ReplayRules.where(where, maxReplays);
            nanosPerLetter = rate == null ? 0 : TimeUnit.SECONDS.toNanos(1) / perSecond(rate);
            if (limit != null && limit < 1) {
                throw new IllegalArgumentException("--limit must be at least 1, was " + limit);
            }
        } catch (IllegalArgumentException misunderstood) {
            err.println("settle dlq replay: " + misunderstood.getMessage());
            err.flush();
            return Main.USAGE;
        }
        return run();
    }

    /** {@code 100/s} or {@code 100}. */
    private static long perSecond(String rate) {
        String number = rate.endsWith("/s") ? rate.substring(0, rate.length() - 2) : rate;
        try {
            long value = Long.parseLong(number.strip());
            if (value >= 1) {
                return value;
            }
        } catch (NumberFormatException notANumber) {
            // Said below.
        }
        throw new IllegalArgumentException("--rate '" + rate + "': say how many letters a second, as 100/s");
    }

    @Override
    int on(PrintWriter out, PrintWriter err, PulsarClient client, DeadLetter deadLetter) throws IOException {
        rules = ReplayRules.of(where, maxReplays, targets());
        Map<ReplayRules.Action, Integer> counts = new EnumMap<>(ReplayRules.Action.class);
        for (ReplayRules.Action action : ReplayRules.Action.values()) {
            counts.put(action, 0);
        }
        String parking = ReplayRules.parkingTopic(deadLetter.topic());
        if (dryRun) {
            try (Reader<byte[]> reader = reader(client, deadLetter)) {
                for (Message<byte[]> letter = next(reader); letter != null && !done(counts); letter = next(reader)) {
                    ReplayRules.Decision decision = rules.decide(letter.getProperties());
                    counts.merge(decision.action(), 1, Integer::sum);
                    say(out, letter, decision, parking, "would ");
                }
            }
            summary(out, counts, "would be ");
            out.println("dry run: nothing was sent or acknowledged");
            return 0;
        }
        Map<String, Producer<byte[]>> producers = new HashMap<>();
        try (Consumer<byte[]> letters = client.newConsumer(Schema.BYTES)
                .topic(deadLetter.topic())
                .subscriptionName(SUBSCRIPTION)
                // One replay at a time: a second one is refused rather than racing the first for letters.
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                // Acknowledged at once, not in a 100 ms group: a kill then replays at most the letter in hand.
                .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                .subscribe()) {
            long next = System.nanoTime();
            while (!done(counts)) {
                Message<byte[]> letter = letters.receive((int) QUIET_MILLIS, TimeUnit.MILLISECONDS);
                if (letter == null) {
                    break;
                }
                ReplayRules.Decision decision = rules.decide(letter.getProperties());
                if (decision.action() == ReplayRules.Action.REPLAY || decision.action() == ReplayRules.Action.PARK) {
                    next = pace(next);
                    String to = decision.topic().orElse(parking);
                    Producer<byte[]> producer = producers.get(to);
                    if (producer == null) {
                        producer = producer(client, to);
                        producers.put(to, producer);
                    }
                    try {
                        // Stored first, acknowledged after: a kill in between sends this letter once more.
                        copy(producer, letter, decision).send();
                    } catch (SchemaSerializationException unfit) {
                        // Checked against the topic's schema as it is sent: the schema changed since the letter
                        // was written, or the payload never decoded. Left for a later run, as a skipped letter is.
                        out.println("leave " + letter.getMessageId() + ": its payload does not fit the schema of "
                                + Printable.text(to) + " (" + Printable.text(unfit.getMessage()) + ")");
                        unfitting++;
                        continue;
                    }
                    letters.acknowledge(letter);
                }
                // A skipped or unreplayable letter stays unacknowledged: the next run sees it again.
                counts.merge(decision.action(), 1, Integer::sum);
                say(out, letter, decision, parking, "");
            }
        } finally {
            for (Producer<byte[]> producer : producers.values()) {
                producer.closeAsync();
            }
        }
        summary(out, counts, "");
        if (unfitting > 0) {
            out.println(unfitting + " left: their payload does not fit their topic's schema");
        }
        return 0;
    }

    /** The subscription's own topics, and every dead-letter topic of the manifest as Settle's. */
    private ReplayRules.Targets targets() {
        return new ReplayRules.Targets(
                found.name(),
                found.topics(),
                loaded.subscriptions().stream()
                        .flatMap(each -> each.deadLetter().stream())
                        .map(DeadLetter::topic)
                        .toList());
    }

    /** Whether --limit letters were replayed or parked. */
    private boolean done(Map<ReplayRules.Action, Integer> counts) {
        return limit != null && counts.get(ReplayRules.Action.REPLAY) + counts.get(ReplayRules.Action.PARK) >= limit;
    }

    /** Waits for the letter's slot under --rate; the next slot. */
    private long pace(long slot) {
        if (nanosPerLetter == 0) {
            return slot;
        }
        long now = System.nanoTime();
        if (slot > now) {
            LockSupport.parkNanos(slot - now);
            return slot + nanosPerLetter;
        }
        return now + nanosPerLetter;
    }

    private static Producer<byte[]> producer(PulsarClient client, String topic) throws PulsarClientException {
        // The topic's own schema: a copy is stored under the schema its topic has, as the original was.
        return client.newProducer(Schema.AUTO_PRODUCE_BYTES())
                .topic(topic)
                .enableBatching(false)
                .create();
    }

    private static TypedMessageBuilder<byte[]> copy(
            Producer<byte[]> producer, Message<byte[]> letter, ReplayRules.Decision decision) {
        return MessageCopy.keyAndTimes(
                letter, producer.newMessage().value(letter.getData()).properties(decision.properties()));
    }

    private static void say(
            PrintWriter out, Message<byte[]> letter, ReplayRules.Decision decision, String parking, String would) {
        String id = letter.getMessageId().toString();
        switch (decision.action()) {
            case REPLAY ->
                out.println(would + "replay " + id + " to "
                        + Printable.text(decision.topic().get()) + " (replay "
                        + decision.properties().get(DeadLetterProperties.REPLAY_COUNT) + ")");
            case PARK ->
                out.println(would + "park " + id + " in " + parking + " (replayed "
                        + ReplayRules.replayCount(decision.properties()) + " times already)");
            case UNREPLAYABLE -> out.println("leave " + id + ": it has no REAL_TOPIC to go back to");
            case FOREIGN ->
                out.println("refuse " + id + ": " + Printable.text(decision.why()) + "; left unacknowledged");
            case SKIP -> {
                // Not what was asked for: said only in the summary.
            }
        }
    }

    private static void summary(PrintWriter out, Map<ReplayRules.Action, Integer> counts, String would) {
        out.println(counts.get(ReplayRules.Action.REPLAY) + " " + would + "replayed, "
                + counts.get(ReplayRules.Action.PARK) + " " + would + "parked, "
                + counts.get(ReplayRules.Action.SKIP) + " left by --where, "
                + counts.get(ReplayRules.Action.UNREPLAYABLE) + " left without a REAL_TOPIC, "
                + counts.get(ReplayRules.Action.FOREIGN) + " " + would
                + "refused: REAL_TOPIC is not a topic of the subscription");
    }
}
