package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * How a subscription's guarantee settles a delivery whose call is over, chosen once when the subscription starts, as
 * Pulsar's sink picks its processor at open: {@link #atLeastOnce()} acknowledges once the call's outputs are stored
 * (publish-then-ack); {@link #exactlyOnce} begins each delivery in a transaction and commits its outputs and its
 * acknowledgement together. The outcome → consumer-call mapping stays {@link Settlement}'s.
 */
interface SettlementStrategy {
    /**
     * The strategy of {@code spec}'s guarantee, chosen once when the subscription starts; an exactly-once subscription's
     * transactions come from {@code transactions} and acknowledge their inputs through {@code acknowledge}.
     */
    static SettlementStrategy of(
            SubscriptionSpec spec,
            Transactions transactions,
            BiFunction<List<MessageId>, Transaction, CompletableFuture<Void>> acknowledge,
            DriverMetrics metrics,
            Time time) {
        if (spec.guarantee() != Guarantee.EXACTLY_ONCE) {
            return atLeastOnce();
        }
        return exactlyOnce(
                new CommitStage(spec.name(), transactions, CommitStage.Limits.of(spec), acknowledge, metrics, time));
    }

    /** Publish-then-ack; nothing begins before a call. */
    static SettlementStrategy atLeastOnce() {
        return AtLeastOnce.INSTANCE;
    }

    /** Each delivery in a transaction of {@code commits}. */
    static SettlementStrategy exactlyOnce(CommitStage commits) {
        return new ExactlyOnce(commits);
    }

    /** Before the call: what its outputs are sent in. */
    default void begin(UnitOfWork<Message<?>> work) throws TransactionFailedException {}

    /**
     * The call is over with {@code outcome} (complete; {@code returned} is its value, null when it failed or gave
     * none): settles {@code delivery} now, or gives its call back and settles it later.
     */
    void callOver(InFlight delivery, CompletableFuture<Outcome> outcome, Outcome returned);

    /**
     * The dead letters of {@code spec}'s subscription under this guarantee, chosen once: the Pulsar client's policy
     * writes every letter when Settle has no {@code writer} or {@code spec} no cap ({@link DeadLettering#byClient});
     * else Settle writes those it has a cause for through {@code writer}, as the guarantee says
     * ({@link #copyCommits}): acknowledging the original once its letter is stored, or committing the two
     * together. The twin of a copy being dead-lettered is held back by {@code watch}; {@code code} names
     * the code in each letter; each letter is a pending send in {@code pending}.
     */
    default DeadLettering<Message<?>> deadLettering(
            SubscriptionSpec spec,
            DeadLetterWriter<Message<?>> writer,
            PendingOutputs pending,
            DeadLettering.LetterWatch<Message<?>> watch,
            Supplier<String> code,
            Time time) {
        if (writer == null || spec.deadLetter().isEmpty()) {
            return DeadLettering.byClient(spec, time);
        }
        return DeadLettering.written(spec, writer, copyCommits(), pending, watch, code, time);
    }

    /**
     * How a copy that settles its original (a dead letter, a delay copy) is written under this guarantee: as it is, the
     * original then acknowledged; at exactly-once, in a transaction of its own with the original's acknowledgement.
     */
    default CopyCommits<Message<?>> copyCommits() {
        return CopyCommits.acknowledged();
    }

    /** Nothing more is handed out for now: what waits for more deliveries goes. */
    default void idle() {}

    /** The subscription stops. */
    default void close() {}

    /** Whether {@code outcome} acknowledges the message (ack or drop). */
    static boolean acknowledges(Outcome outcome) {
        return outcome instanceof Outcome.Ack || outcome instanceof Outcome.Drop;
    }
}
