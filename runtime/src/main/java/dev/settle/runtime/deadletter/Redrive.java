package dev.settle.runtime.deadletter;

import dev.settle.runtime.manifest.HoldForFix;
import dev.settle.runtime.manifest.Topics;
import dev.settle.runtime.publish.ResendGuardedMessageBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SchemaSerializationException;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * The re-drive of a subscription's held messages (docs/dead-letters.md, "Hold for a fix"): each held copy is received
 * on the held topic's durable subscription {@link HoldForFix#REDRIVE_SUBSCRIPTION}, decided by {@link #decide}, copied
 * ({@link MessageCopy}, the copying rules of dead letters and replays) back to the topic it came from with {@link
 * DeadLetterProperties#redriven}, and acknowledged only once its copy is stored, so a run cut short resumes where it
 * stopped. The copies of one pass go in key order ({@link #inKeyOrder}), at the subscription's {@code redriveRate}. A
 * held copy that is not sent stays unacknowledged for a later run. At {@code guarantee: exactly-once} ({@link
 * #inTransactions}) each copy is sent and its held copy acknowledged in one transaction: a run cut short between the
 * two sends nothing twice.
 */
public final class Redrive {
    /** Held copies sorted and sent together: a pass is in key order; a backlog larger than this goes in passes. */
    static final int PASS = 10_000;

    /** What a run does with one held copy. */
    public enum Action {
        /** Back to its topic. */
        REDRIVE,
        /** Left: held by the code that runs now (the loop guard); it waits for another generation. */
        SAME_CODE,
        /** Left: another subscription's, sharing the held topic. */
        OTHER_SUBSCRIPTION,
        /** Left: its REAL_TOPIC is missing, not a topic the subscription consumes, or one of Settle's own. */
        REFUSED
    }

    /** What to do, where to, and why a refused copy is left (empty otherwise). */
    public record Decision(Action action, Optional<String> topic, String why) {}

    /** How many held copies went each way, and how many were left because their payload did not fit. */
    public record Counts(int redriven, int sameCode, int otherSubscription, int refused, int unfit) {
        /** How many of the subscription's held copies were seen. */
        public int ofTheSubscription() {
            return redriven + sameCode + refused + unfit;
        }
    }

    /** Told of each held copy as it is decided, to print or log. */
    public interface Report {
        /** {@code held} was (or, in a dry run, would be) handled as {@code decision} says. */
        void decided(Message<byte[]> held, Decision decision);

        /** {@code held} is left: its payload does not fit the schema of {@code topic} ({@code why}). */
        default void unfit(Message<byte[]> held, String topic, String why) {}
    }

    /** Begins the transaction one held copy is sent back and acknowledged in (exactly-once). */
    @FunctionalInterface
    public interface Begin {
        /** @return completes with an open transaction; exceptionally when none can be begun */
        CompletableFuture<Transaction> begin();
    }

    /** The longest a run waits for a transaction to begin, a copy in one to be stored or acknowledged, or a commit. */
    static final Duration TRANSACTION_WAIT = Duration.ofSeconds(30);

    private final PulsarClient client;
    private final String heldTopic;
    private final ReplayRules.Targets targets;
    private final long perSecond;
    /** Null at at-least-once: a copy is stored, then its held copy acknowledged. */
    private final Begin transactions;

    /**
     * @param targets the subscription's own topics, which alone a held copy goes back to
     * @param perSecond copies a second at most; 0 for as fast as the broker stores them
     */
    public Redrive(PulsarClient client, String heldTopic, ReplayRules.Targets targets, long perSecond) {
        this(client, heldTopic, targets, perSecond, null);
    }

    private Redrive(
            PulsarClient client, String heldTopic, ReplayRules.Targets targets, long perSecond, Begin transactions) {
        this.client = client;
        this.heldTopic = heldTopic;
        this.targets = targets;
        this.perSecond = perSecond;
        this.transactions = transactions;
    }

    /**
     * This re-drive at {@code guarantee: exactly-once}: each copy sent back and its held copy acknowledged in one
     * transaction from {@code transactions}, so that a kill or a failure between the two neither sends it twice nor
     * loses it (docs/dead-letters.md, "Hold for a fix").
     */
    public Redrive inTransactions(Begin transactions) {
        return new Redrive(client, heldTopic, targets, perSecond, Objects.requireNonNull(transactions));
    }

    /**
     * What a run does with a held copy with these properties: another subscription's, or one held by code that
     * {@code redrives} refuses (the code running now), is left; one whose {@code REAL_TOPIC} is not a topic of the
     * subscription ({@link ReplayRules.Targets}) is refused; the rest go back to their topic.
     */
    static Decision decide(Map<String, String> held, ReplayRules.Targets targets, Predicate<HeldBy> redrives) {
        if (!DeadLetterProperties.belongsTo(held, targets.subscription())) {
            return new Decision(Action.OTHER_SUBSCRIPTION, Optional.empty(), "");
        }
        String topic = held.get(DeadLetterProperties.REAL_TOPIC);
        if (topic == null || topic.isBlank()) {
            return new Decision(Action.REFUSED, Optional.empty(), "it has no REAL_TOPIC to go back to");
        }
        Optional<String> refused = targets.refusal(topic);
        if (refused.isPresent()) {
            return new Decision(Action.REFUSED, Optional.empty(), refused.get());
        }
        if (!redrives.test(HeldBy.of(held))) {
            return new Decision(Action.SAME_CODE, Optional.empty(), "");
        }
        return new Decision(Action.REDRIVE, Optional.of(Topics.fullName(topic)), "");
    }

    /**
     * {@code held}, sorted so that each key's messages come in the order their originals were published: by key, then
     * the original's publish time, topic and position ({@code settle.held.*}); the sort is stable, so what those do
     * not tell apart keeps the order it was held in.
     */
    static <T> void inKeyOrder(List<T> held, Function<T, String> key, Function<T, Map<String, String>> properties) {
        held.sort(Comparator.comparing(key)
                .thenComparingLong(each -> number(properties.apply(each).get(DeadLetterProperties.HELD_PUBLISH_TIME)))
                .thenComparing(each -> properties.apply(each).getOrDefault(DeadLetterProperties.REAL_TOPIC, ""))
                .thenComparing(
                        each -> position(properties.apply(each).get(DeadLetterProperties.HELD_POSITION)),
                        Arrays::compare));
    }

    private static long number(String text) {
        try {
            return text == null ? 0 : Long.parseLong(text);
        } catch (NumberFormatException unreadable) {
            return 0;
        }
    }

    /** {@code ledger:entry:batchIndex} as numbers; none for what does not read so. */
    private static long[] position(String text) {
        if (text == null) {
            return new long[0];
        }
        String[] parts = text.split(":", -1);
        long[] position = new long[parts.length];
        try {
            for (int i = 0; i < parts.length; i++) {
                position[i] = Long.parseLong(parts[i]);
            }
        } catch (NumberFormatException unreadable) {
            return new long[0];
        }
        return position;
    }

    /**
     * Sends back, in key order, every held copy waiting on the held topic when the run starts that {@code redrives}
     * takes (by the code that held it), each acknowledged once its copy is stored.
     *
     * @throws PulsarClientException when the broker cannot be reached, refuses a copy, or another run (another
     *     replica's) holds the re-drive's subscription: what was acknowledged is done, the rest waits
     */
    public Counts run(Predicate<HeldBy> redrives, Report report) throws PulsarClientException {
        try (Replay.Waiting held = new Replay.Waiting(client.newConsumer(Schema.BYTES)
                .topic(heldTopic)
                .subscriptionName(HoldForFix.REDRIVE_SUBSCRIPTION)
                // One re-drive at a time: another replica's is refused rather than sending a key's messages out of
                // order beside this one.
                .subscriptionType(SubscriptionType.Exclusive)
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                // Acknowledged at once, not in a 100 ms group: a kill then re-drives at most the copy in hand again.
                .acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS)
                .subscribe())) {
            return redrive(held, redrives, true, report);
        }
    }

    /** Says what {@link #run} would do now; sends, acknowledges and creates nothing. */
    public Counts dryRun(Predicate<HeldBy> redrives, Report report) throws PulsarClientException {
        try (Replay.Waiting held = Replay.waiting(client, heldTopic, HoldForFix.REDRIVE_SUBSCRIPTION)) {
            return redrive(held, redrives, false, report);
        }
    }

    private Counts redrive(Replay.Waiting held, Predicate<HeldBy> redrives, boolean send, Report report)
            throws PulsarClientException {
        int[] counts = new int[Action.values().length];
        int unfit = 0;
        Map<String, Producer<byte[]>> producers = new HashMap<>();
        Pacing pacing = new Pacing(perSecond);
        try {
            long next = pacing.start();
            for (List<Message<byte[]>> pass = pass(held); !pass.isEmpty(); pass = pass(held)) {
                inKeyOrder(pass, message -> message.hasKey() ? message.getKey() : "", Message::getProperties);
                for (Message<byte[]> copy : pass) {
                    Decision decision = decide(copy.getProperties(), targets, redrives);
                    if (send && decision.action() == Action.REDRIVE) {
                        next = pacing.pace(next);
                        String to = decision.topic().get();
                        Producer<byte[]> producer = producers.get(to);
                        if (producer == null) {
                            producer = producer(to);
                            producers.put(to, producer);
                        }
                        try {
                            if (transactions == null) {
                                // Stored first, acknowledged after: a kill in between sends this one once more.
                                MessageCopy.of(
                                                copy,
                                                producer.newMessage(),
                                                DeadLetterProperties.redriven(copy.getProperties()))
                                        .send();
                                held.acknowledge(copy);
                            } else {
                                inOneTransaction(held, copy, producer);
                            }
                        } catch (SchemaSerializationException misfit) {
                            unfit++;
                            report.unfit(copy, to, misfit.getMessage());
                            continue;
                        }
                    }
                    counts[decision.action().ordinal()]++;
                    report.decided(copy, decision);
                }
            }
        } finally {
            for (Producer<byte[]> producer : producers.values()) {
                producer.closeAsync();
            }
        }
        return new Counts(
                counts[Action.REDRIVE.ordinal()],
                counts[Action.SAME_CODE.ordinal()],
                counts[Action.OTHER_SUBSCRIPTION.ordinal()],
                counts[Action.REFUSED.ordinal()],
                unfit);
    }

    /**
     * Sends {@code copy} back through {@code producer} and acknowledges it on {@code held}, both in one transaction,
     * then commits it; aborts it when either fails (the held copy then waits for a later run, nothing stored).
     */
    private void inOneTransaction(Replay.Waiting held, Message<byte[]> copy, Producer<byte[]> producer)
            throws PulsarClientException {
        Transaction transaction = await(transactions.begin(), "beginning a transaction");
        try {
            sendBack(held, copy, producer, transaction);
        } catch (PulsarClientException | RuntimeException e) {
            // Nothing of the two counts: the copy stays held, unacknowledged, for a later run.
            transaction.abort();
            throw e;
        }
        await(transaction.commit(), "committing the transaction of held message " + copy.getMessageId());
    }

    /**
     * Sends {@code copy} back through {@code producer} and acknowledges it on {@code held}, both in {@code
     * transaction}, which the caller commits or aborts: either both happen, or neither.
     */
    void sendBack(Replay.Waiting held, Message<byte[]> copy, Producer<byte[]> producer, Transaction transaction)
            throws PulsarClientException {
        await(
                MessageCopy.of(
                                copy,
                                // Stored twice by the client's resend after a drop, the copy would be handled twice.
                                ResendGuardedMessageBuilder.inTransaction(producer.newMessage(transaction), producer),
                                DeadLetterProperties.redriven(copy.getProperties()))
                        .sendAsync(),
                "sending held message " + copy.getMessageId() + " back");
        await(held.acknowledge(copy, transaction), "acknowledging held message " + copy.getMessageId());
    }

    /** A producer of copies to {@code topic}; in transactions, one whose sends a transaction's timeout bounds. */
    Producer<byte[]> producer(String topic) throws PulsarClientException {
        if (transactions == null) {
            return Replay.producer(client, topic);
        }
        // The client refuses a transactional send from a producer with a send timeout
        // ("Only producers disabled sendTimeout are allowed to produce transactional messages").
        return client.newProducer(Schema.AUTO_PRODUCE_BYTES())
                .topic(topic)
                .enableBatching(false)
                .sendTimeout(0, TimeUnit.SECONDS)
                .create();
    }

    private static <T> T await(CompletableFuture<T> step, String what) throws PulsarClientException {
        try {
            return step.get(TRANSACTION_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PulsarClientException(what + ": interrupted");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SchemaSerializationException misfit) {
                throw misfit;
            }
            throw PulsarClientException.unwrap(e.getCause());
        } catch (TimeoutException e) {
            throw new PulsarClientException.TimeoutException(what + ": no answer within " + TRANSACTION_WAIT);
        }
    }

    /** The next held copies, up to {@link #PASS}; empty at the end. */
    private static List<Message<byte[]>> pass(Replay.Waiting held) throws PulsarClientException {
        List<Message<byte[]>> pass = new ArrayList<>();
        while (pass.size() < PASS) {
            Message<byte[]> copy = held.next();
            if (copy == null) {
                break;
            }
            pass.add(copy);
        }
        return pass;
    }
}
