package dev.settle.runtime.deadletter;

import dev.settle.runtime.manifest.DeadLetter;
import java.io.IOException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SchemaSerializationException;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionMode;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.TopicMessageId;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * {@code settle dlq replay}'s loop (docs/dead-letters.md, "Replaying dead letters"): each letter is received on the
 * replay's own durable subscription {@link #SUBSCRIPTION}, decided by {@link ReplayRules}, copied ({@link MessageCopy},
 * the copying rules Settle's own letters are written with) back to its topic or to the parking topic, and acknowledged
 * only once its copy is stored, so a run killed half-way resumes where it stopped. A letter the rules leave stays
 * unacknowledged for a later run. Printing is the caller's, through {@link Report}.
 */
public final class Replay {
    /** The replay's own durable subscription on the dead-letter topic. */
    public static final String SUBSCRIPTION = "settle-replay";

    /** How long a reading command ({@link #waiting}) waits for a subscription a run holds before it gives up. */
    static final Duration BUSY_WAIT = Duration.ofSeconds(30);
    /** A run ends once no letter came for this long, if it did not reach the last letter before. */
    private static final long QUIET_MILLIS = 2_000;

    /** Told of each letter as it is decided, to print. */
    public interface Report {
        /** {@code letter} was (or, in a dry run, would be) handled as {@code decision} says. */
        void decided(Message<byte[]> letter, ReplayRules.Decision decision);

        /** {@code letter} is left: its payload does not fit the schema of {@code topic} ({@code why}). */
        void unfit(Message<byte[]> letter, String topic, String why);
    }

    /** How many letters went each way, and how many were left because their payload did not fit. */
    public static final class Counts {
        private final Map<ReplayRules.Action, Integer> counts = new EnumMap<>(ReplayRules.Action.class);
        private int unfit;

        Counts() {
            for (ReplayRules.Action action : ReplayRules.Action.values()) {
                counts.put(action, 0);
            }
        }

        /** How many letters were decided as {@code action}. */
        public int of(ReplayRules.Action action) {
            return counts.get(action);
        }

        /** How many letters were left because their payload does not fit their topic's schema. */
        public int unfit() {
            return unfit;
        }

        /** How many letters of the subscription were seen, whatever was done with them. */
        public int ofTheSubscription() {
            return counts.entrySet().stream()
                            .filter(entry -> entry.getKey() != ReplayRules.Action.OTHER_SUBSCRIPTION)
                            .mapToInt(Map.Entry::getValue)
                            .sum()
                    + unfit;
        }

        /** How many letters were sent somewhere: replayed or parked. */
        public int moved() {
            return of(ReplayRules.Action.REPLAY) + of(ReplayRules.Action.PARK);
        }
    }

    private final PulsarClient client;
    private final DeadLetter deadLetter;
    private final ReplayRules rules;
    private final int limit;
    private final Pacing pacing;

    /**
     * @param limit stop after this many letters replayed or parked
     * @param perSecond send at most this many letters a second; 0 for as fast as the broker stores them
     */
    public Replay(PulsarClient client, DeadLetter deadLetter, ReplayRules rules, int limit, long perSecond) {
        this.client = client;
        this.deadLetter = deadLetter;
        this.rules = rules;
        this.limit = limit;
        this.pacing = new Pacing(perSecond);
    }

    /** The parking topic: where a letter replayed {@code --max-replays} times goes, every property kept. */
    public String parkingTopic() {
        return ReplayRules.parkingTopic(deadLetter.topic());
    }

    /**
     * Says what {@link #run} would do now: the same letters, in the same loop, decided by the same rules, read through
     * {@link #waiting} so that the letters a replay already sent back or parked are not counted again; sends,
     * acknowledges and creates nothing.
     */
    public Counts dryRun(Report report) throws IOException {
        try (Waiting letters = waiting(client, deadLetter)) {
            return replay(letters, false, report);
        }
    }

    /**
     * Replays and parks the letters waiting on {@link #SUBSCRIPTION}, each acknowledged once its copy is stored.
     *
     * @throws IOException ({@link PulsarClientException}) when the broker cannot be reached or refuses a copy: the
     *     letters acknowledged so far are done, the rest wait
     */
    public Counts run(Report report) throws IOException {
        try (Waiting letters = new Waiting(client.newConsumer(Schema.BYTES)
                .topic(deadLetter.topic())
                .subscriptionName(SUBSCRIPTION)
                // One replay at a time: a second one is refused rather than racing the first for letters.
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                // Acknowledged at once, not in a 100 ms group: a kill then replays at most the letter in hand.
                .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                .subscribe())) {
            return replay(letters, true, report);
        }
    }

    private Counts replay(Waiting letters, boolean send, Report report) throws PulsarClientException {
        Counts counts = new Counts();
        Map<String, Producer<byte[]>> producers = new HashMap<>();
        try {
            long next = pacing.start();
            for (Message<byte[]> letter = counts.moved() < limit ? letters.next() : null;
                    letter != null;
                    letter = counts.moved() < limit ? letters.next() : null) {
                ReplayRules.Decision decision = rules.decide(letter.getProperties());
                if (send
                        && (decision.action() == ReplayRules.Action.REPLAY
                                || decision.action() == ReplayRules.Action.PARK)) {
                    next = pacing.pace(next);
                    String to = decision.topic().orElse(parkingTopic());
                    Producer<byte[]> producer = producers.get(to);
                    if (producer == null) {
                        producer = producer(client, to);
                        producers.put(to, producer);
                    }
                    try {
                        // Stored first, acknowledged after: a kill in between sends this letter once more.
                        MessageCopy.of(letter, producer.newMessage(), decision.properties())
                                .send();
                    } catch (SchemaSerializationException unfit) {
                        // Checked against the topic's schema as it is sent: the schema changed since the letter
                        // was written, or the payload never decoded. Left for a later run, as a skipped letter is.
                        counts.unfit++;
                        report.unfit(letter, to, unfit.getMessage());
                        continue;
                    }
                    letters.consumer.acknowledge(letter);
                }
                // A skipped or unreplayable letter stays unacknowledged: the next run sees it again.
                counts.counts.merge(decision.action(), 1, Integer::sum);
                report.decided(letter, decision);
            }
        } finally {
            for (Producer<byte[]> producer : producers.values()) {
                producer.closeAsync();
            }
        }
        return counts;
    }

    /**
     * The letters waiting for a replay of {@code deadLetter}'s topic, oldest first, as {@link #run} receives them: read
     * through {@link #SUBSCRIPTION} when a replay made it, so a letter already sent back or parked is not seen again;
     * the whole topic before the first replay. Acknowledges nothing and creates nothing: a non-durable consumer (a
     * cursor of its own, gone when it closes) while the replay's subscription does not exist; once it does, the broker
     * refuses a non-durable one of its name ("Durable subscription with the same name already exists", 4.2.4), and a
     * consumer joins that subscription instead, acknowledging nothing: what it received is delivered again to the next.
     * {@code settle dlq list}, {@code show} and {@code replay --dry-run} read this way.
     */
    public static Waiting waiting(PulsarClient client, DeadLetter deadLetter) throws PulsarClientException {
        return waiting(client, deadLetter.topic(), SUBSCRIPTION);
    }

    /**
     * As {@link #waiting(PulsarClient, DeadLetter)}, the messages waiting on {@code topic} for {@code subscription}
     * (the held topic's re-drive reads its messages through {@code settle-redrive}).
     */
    public static Waiting waiting(PulsarClient client, String topic, String subscription) throws PulsarClientException {
        return waiting(client, topic, subscription, BUSY_WAIT);
    }

    static Waiting waiting(PulsarClient client, String topic, String subscription, Duration busyWait)
            throws PulsarClientException {
        ConsumerBuilder<byte[]> consumer = client.newConsumer(Schema.BYTES)
                .topic(topic)
                .subscriptionName(subscription)
                // As the replay's own: a replay running now refuses it rather than share its letters.
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest);
        try {
            return new Waiting(consumer.clone()
                    .subscriptionMode(SubscriptionMode.NonDurable)
                    .subscribe());
        } catch (PulsarClientException.NotAllowedException durableExists) {
            return joinWhenFree(consumer.subscriptionMode(SubscriptionMode.Durable), topic, subscription, busyWait);
        }
    }

    /**
     * Joins the existing durable {@code subscription}, waiting up to {@code busyWait} while a run holds it: a runtime's
     * re-drive holds its subscription for the seconds a pass takes (at each start and swap, and again 2 s after a try
     * that found it busy), so a {@code settle held list} at that moment would otherwise fail for no reason of its own.
     */
    private static Waiting joinWhenFree(
            ConsumerBuilder<byte[]> consumer, String topic, String subscription, Duration busyWait)
            throws PulsarClientException {
        long deadline = System.nanoTime() + busyWait.toNanos();
        long pauseMillis = 50;
        while (true) {
            try {
                return new Waiting(consumer.clone().subscribe());
            } catch (PulsarClientException.ConsumerBusyException busy) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new PulsarClientException.ConsumerBusyException("the subscription '" + subscription
                            + "' of " + topic + " was in use by a run moving its messages (a runtime re-driving"
                            + " held messages, a settle held drain or a settle dlq replay) for all of "
                            + busyWait.toSeconds() + " s; nothing was read: run the command again when that run"
                            + " has ended");
                }
                try {
                    // The pause between tries: the broker says nothing when the subscription is free again.
                    Thread.sleep(pauseMillis);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new PulsarClientException(interrupted);
                }
                pauseMillis = Math.min(pauseMillis * 2, 1_000);
            }
        }
    }

    /**
     * Letters received in order up to the last one on the topic when reading began: a run replays the letters there
     * when it starts, and letters written meanwhile wait for the next one. Also ends when none came for 2 s (the last
     * letter may be one a replay acknowledged already).
     */
    public static final class Waiting implements AutoCloseable {
        private final Consumer<byte[]> consumer;
        /** The topic's last message when reading began; null when it had none. */
        private final MessageId last;

        private boolean ended;

        Waiting(Consumer<byte[]> consumer) throws PulsarClientException {
            this.consumer = consumer;
            MessageId newest = null;
            try {
                List<TopicMessageId> lasts = consumer.getLastMessageIds();
                newest = lasts.size() == 1 && hasEntry(lasts.get(0)) ? lasts.get(0) : null;
                // More than one (a partitioned dead-letter topic): no single last one; the quiet time ends the run.
                this.ended = lasts.size() == 1 && newest == null;
            } catch (PulsarClientException e) {
                consumer.close();
                throw e;
            }
            this.last = newest;
        }

        private static boolean hasEntry(MessageId id) {
            return !(id instanceof MessageIdAdv adv) || adv.getEntryId() >= 0;
        }

        /** The next letter; null once the last one when reading began was read, or none came for 2 s. */
        public Message<byte[]> next() throws PulsarClientException {
            if (ended) {
                return null;
            }
            Message<byte[]> letter = consumer.receive((int) QUIET_MILLIS, TimeUnit.MILLISECONDS);
            if (letter == null || (last != null && letter.getMessageId().compareTo(last) >= 0)) {
                ended = true;
            }
            return letter;
        }

        /** Acknowledges {@code message} on the subscription it was read through. */
        void acknowledge(Message<byte[]> message) throws PulsarClientException {
            consumer.acknowledge(message);
        }

        /** As above, in {@code transaction}: it counts once the transaction commits. */
        CompletableFuture<Void> acknowledge(Message<byte[]> message, Transaction transaction) {
            return consumer.acknowledgeAsync(message.getMessageId(), transaction);
        }

        @Override
        public void close() throws PulsarClientException {
            consumer.close();
        }
    }

    /** A producer of copies to {@code topic}, in the topic's own schema; the re-drive sends its copies so too. */
    static Producer<byte[]> producer(PulsarClient client, String topic) throws PulsarClientException {
        // The topic's own schema: a copy is stored under the schema its topic has, as the original was.
        return client.newProducer(Schema.AUTO_PRODUCE_BYTES())
                .topic(topic)
                .enableBatching(false)
                .create();
    }
}
