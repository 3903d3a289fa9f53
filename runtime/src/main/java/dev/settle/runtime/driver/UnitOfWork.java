package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.DelayCopy;
import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.publish.Publishes;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * One delivery of a message, from its receipt to its settlement (docs/design.md, "A delivery is a unit of work"):
 * made by the driver when the message is received, passed to the port, which sends its outputs through it and
 * whose failure is recorded on it as a value, and finished by {@link Settlement}, whose acknowledgement it keeps
 * as a stage. What the settlement rules look at is read once, when the message is received.
 *
 * <p>Thread-safe: a function may publish from threads of its own, and an outcome may complete on another thread.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
public final class UnitOfWork<M> {
    /** A call's lease: its deadline, which the handler may move ({@code Delivery.extend}). */
    public interface Lease {
        /** Moves the call's deadline to {@code duration} from now, unless it is later already (see the SDK's). */
        void extend(java.time.Duration duration);
    }

    /** The lease of a delivery that was never given one (not called yet, or called outside a driver). */
    private static final Lease NO_LEASE = duration -> {
        throw new IllegalStateException("extend(" + duration + ") refused: this delivery is not being handled");
    };

    private final M message;
    private final Object id;
    private final int attempt;
    private final boolean batched;
    private final long receivedNanos;

    /** Guarded by {@code this}; null until the first output. */
    private Publishes outputs;

    /** Null unless the delivery is exactly-once: set before the port is called, so every output is sent in it. */
    private volatile Transaction transaction;
    /** The transaction this delivery shares with others (exactly-once); null until it joined one. */
    private volatile SharedTransaction shared;
    /** Null when this delivery is not traced; set once, before the port is called. */
    private volatile Tracing.Handling trace;

    private volatile Failure failure;
    /** How many later messages of its key went before it when its key's hold timed out; 0 for none. */
    private volatile int keyPassedBy;

    private volatile CompletionStage<Void> acknowledged;

    /** The origin id {@code topic@messageId} of the message a delay copy copies; null for any other message. */
    private volatile String copyOf;

    /** While a canary ramp runs, the number of the generation that handled it; 0 otherwise. */
    private volatile int generation;

    /** The lease of its current call; set before the port is called. */
    private volatile Lease lease = NO_LEASE;
    /** Why its outputs are refused (its call timed out); null while they are taken. Guarded by {@code this}. */
    private String outputsRefused;

    /**
     * @param message what the consumer calls are made with
     * @param id names the message in logs
     * @param attempt the redelivery count + 1, as the broker counted it
     * @param batched whether it came in a batch of more than one, so a retry brings back its siblings too
     * @param receivedNanos when it was handed out, on the runtime's {@link dev.settle.runtime.time.Time}: the
     *     client's ack-timeout clock runs from there
     */
    public UnitOfWork(M message, Object id, int attempt, boolean batched, long receivedNanos) {
        this.message = message;
        this.id = id;
        this.attempt = attempt;
        this.batched = batched;
        this.receivedNanos = receivedNanos;
    }

    public M message() {
        return message;
    }

    public Object id() {
        return id;
    }

    public int attempt() {
        return attempt;
    }

    public boolean batched() {
        return batched;
    }

    public long receivedNanos() {
        return receivedNanos;
    }

    /** The sends of this delivery, made through {@code to} on the first: every publish of the call goes here. */
    public synchronized Publishes outputs(Outputs to) {
        if (outputsRefused != null) {
            throw new IllegalStateException(outputsRefused);
        }
        if (outputs == null) {
            outputs = new Publishes(to, transaction, trace);
        }
        return outputs;
    }

    /** How many sends were made for this delivery so far. */
    public int sends() {
        return outputs().map(Publishes::count).orElse(0);
    }

    /** The sends of this delivery; empty when nothing was published for it. */
    public synchronized Optional<Publishes> outputs() {
        return Optional.ofNullable(outputs);
    }

    /**
     * Refuses every output from now on, saying {@code why}: the call timed out and was settled, so what it still
     * publishes must never reach a topic.
     */
    synchronized void refuseOutputs(String why) {
        outputsRefused = why;
        if (outputs != null) {
            outputs.refuse(why);
        }
    }

    /** Gives its call {@code given} as its lease. */
    void leased(Lease given) {
        lease = given;
    }

    /** The lease of its current call, which {@code Delivery.extend} moves. */
    public Lease lease() {
        return lease;
    }

    /** Makes this delivery exactly-once: its outputs are sent, and its acknowledgement made, in {@code open}. */
    void inTransaction(Transaction open) {
        transaction = open;
    }

    /** Makes this delivery one of {@code joined}'s, whose transaction it is in once begun. */
    void sharing(SharedTransaction joined) {
        shared = joined;
    }

    /** The transaction this delivery shares; null unless it is exactly-once and joined one. */
    SharedTransaction shared() {
        return shared;
    }

    /** The transaction of an exactly-once delivery; empty for at-least-once. */
    public Optional<Transaction> transaction() {
        return Optional.ofNullable(transaction);
    }

    /**
     * This delivery as a held redelivery needs it: the message and how it was received, without its failure (the
     * exception, with its stack) and its outputs, which a wait of up to 30 s would otherwise keep alive.
     */
    UnitOfWork<M> forRedelivery() {
        UnitOfWork<M> kept = new UnitOfWork<>(message, id, attempt, batched, receivedNanos);
        // Small and needed: the dead letter written when the hold ends is a child of this handling's span.
        kept.trace = trace;
        kept.copyOf = copyOf;
        return kept;
    }

    /**
     * Makes this delivery the handling of a delay copy ({@code durableDelays}) of the message {@code origin} names
     * ({@code topic@messageId}): its handler, its dead letter and its next copy name that message.
     */
    void copyOf(String origin) {
        copyOf = origin;
    }

    /** The origin id of the message this delivery's delay copy copies; empty when it is no delay copy. */
    public Optional<String> copyOf() {
        return Optional.ofNullable(copyOf);
    }

    /**
     * The topic of the message a delay copy copies (the one the handler and a function's record name); empty when
     * this is no delay copy.
     */
    public Optional<String> copyOfTopic() {
        return copyOf().map(DelayCopy::topicOf);
    }

    /** Traces this delivery in {@code handling}'s span: its outputs and dead letter go into it. */
    void traced(Tracing.Handling handling) {
        trace = handling;
    }

    /** The span of this delivery's handling; null when it is not traced. */
    Tracing.Handling trace() {
        return trace;
    }

    /** Records why this delivery failed; the settlement redelivers it (and a later failure replaces it). */
    void failed(Failure why) {
        failure = why;
    }

    /** Why this delivery failed, if it did. */
    public Optional<Failure> failure() {
        return Optional.ofNullable(failure);
    }

    /** Records the acknowledgement the settlement asked for. */
    void acknowledging(CompletionStage<Void> acknowledgement) {
        acknowledged = acknowledgement;
    }

    /**
     * The acknowledgement of this delivery, completing once the consumer has taken it (grouped acks are sent
     * later); empty when it was not acknowledged.
     */
    public Optional<CompletionStage<Void>> acknowledged() {
        return Optional.ofNullable(acknowledged);
    }

    @Override
    public String toString() {
        return "delivery of " + id + " attempt " + attempt;
    }

    /**
     * Names the generation that handles this delivery while a canary ramp runs (its number, 1 or more): its outcome
     * is counted under it in {@code settle_outcomes_total}'s {@code generation} label.
     */
    public void handledBy(int number) {
        generation = number;
    }

    /** The generation that handled it while a canary ramp runs; 0 without one. */
    int generation() {
        return generation;
    }

    /** {@code count} later messages of this message's key were let go before it (its key's hold timed out). */
    void keyPassedBy(int count) {
        keyPassedBy = count;
    }

    /** How many later messages of its key went before it because its key's hold timed out; 0 for none. */
    int keyPassedBy() {
        return keyPassedBy;
    }
}
