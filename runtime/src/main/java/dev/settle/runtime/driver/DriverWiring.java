package dev.settle.runtime.driver;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.pulsar.client.api.Message;

/**
 * What a {@link SubscriptionDriver} is connected to beyond its subscription and its handler, each part optional:
 * {@link #NONE} is a driver on its own (the tests'), the runtime adds its outputs, transactions and tracing.
 *
 * @param outputsNotReady why the subscription's outputs cannot be written yet; the driver subscribes once it is empty
 * @param flushOutputs sends the outputs' batches now: run whenever the subscription has nothing more to hand out
 * @param transactions where an exactly-once subscription's transactions come from; null for at-least-once
 * @param tracing traces each handling (the pipeline's journal part); null when tracing is off, which leaves the
 *     journal slot empty
 * @param letters wraps Settle's own dead-letter writer (a test holds a letter in flight with it)
 * @param journal told of each settlement; {@link Journal#NONE} when the subscription keeps no journal
 */
public record DriverWiring(
        Supplier<Optional<String>> outputsNotReady,
        Runnable flushOutputs,
        Transactions transactions,
        Tracing tracing,
        UnaryOperator<DeadLetterWriter<Message<?>>> letters,
        Journal journal) {
    /** Nothing but the subscription: no outputs to wait for, at-least-once, untraced, no settlement journal. */
    public static final DriverWiring NONE =
            new DriverWiring(Optional::empty, () -> {}, null, null, UnaryOperator.identity(), Journal.NONE);

    public DriverWiring {
        Objects.requireNonNull(outputsNotReady, "outputsNotReady");
        Objects.requireNonNull(flushOutputs, "flushOutputs");
        Objects.requireNonNull(letters, "letters");
        Objects.requireNonNull(journal, "journal");
    }

    /** These, with outputs that say when they can be written and are flushed when the subscription is idle. */
    public DriverWiring withOutputs(Supplier<Optional<String>> notReady, Runnable flush) {
        return new DriverWiring(notReady, flush, transactions, tracing, letters, journal);
    }

    /** These, with the transactions of an exactly-once subscription (null for at-least-once). */
    public DriverWiring withTransactions(Transactions from) {
        return new DriverWiring(outputsNotReady, flushOutputs, from, tracing, letters, journal);
    }

    /** These, traced by {@code traces} (null when off). */
    public DriverWiring withTracing(Tracing traces) {
        return new DriverWiring(outputsNotReady, flushOutputs, transactions, traces, letters, journal);
    }

    /** These, each settlement told to {@code to} (the settlement journal). */
    public DriverWiring withJournal(Journal to) {
        return new DriverWiring(outputsNotReady, flushOutputs, transactions, tracing, letters, to);
    }

    /** These, each dead letter written through {@code wrap} around Settle's own writer. */
    DriverWiring withLetters(UnaryOperator<DeadLetterWriter<Message<?>>> wrap) {
        return new DriverWiring(outputsNotReady, flushOutputs, transactions, tracing, wrap, journal);
    }
}
