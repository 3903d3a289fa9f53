package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.api.transaction.TransactionCoordinatorClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends a subscription's transactions for certain. The client asks the coordinator once to commit or abort. The
 * coordinator marks the transaction COMMITTING (ABORTING) and then tells each of its topics; when a topic refuses (a
 * broker that is stopping answers PersistenceError), Pulsar 4.2.4's coordinator answers the error and does not try
 * again: the transaction stays COMMITTING for good, its output topics' readers stop before it and its inputs'
 * acknowledgements stay pending, until the coordinator is moved to another broker. Its timeout does not help either:
 * the coordinator only times out open transactions.
 *
 * <p>After such an answer the client keeps the transaction COMMITTING (ABORTING) and takes the same end again, and the
 * coordinator, asked again, tells the topics again. So an end whose answer is not final is sent again, after
 * {@link #FIRST_RETRY}, doubling up to {@link #LONGEST_RETRY}, until one is: done, the coordinator no longer knows the
 * transaction or finds it in another state, the client ended it itself (a send of it had failed), or the runtime
 * stops (its transactions' client is closed, or its timer refuses). Thread-safe.
 */
final class TransactionEnds {
    private static final Logger log = LoggerFactory.getLogger(TransactionEnds.class);

    static final Duration FIRST_RETRY = Duration.ofMillis(500);
    static final Duration LONGEST_RETRY = Duration.ofSeconds(10);

    private final String subscription;
    private final Time time;
    /** Whether the runtime's transactions are closed: it stops, and nothing can be sent any more. */
    private final BooleanSupplier stopped;

    TransactionEnds(String subscription, Time time, BooleanSupplier stopped) {
        this.subscription = subscription;
        this.time = time;
        this.stopped = stopped;
    }

    /** Commits {@code transaction}: completes once committed, exceptionally with the first final refusal. */
    CompletableFuture<Void> commit(Transaction transaction) {
        return end(transaction, Transaction::commit, "commit");
    }

    /** Aborts {@code transaction}: completes once aborted, exceptionally with the first final refusal. */
    CompletableFuture<Void> abort(Transaction transaction) {
        return end(transaction, Transaction::abort, "abort");
    }

    private CompletableFuture<Void> end(
            Transaction transaction, Function<Transaction, CompletableFuture<Void>> end, String what) {
        CompletableFuture<Void> ended = new CompletableFuture<>();
        attempt(transaction, end, what, 1, FIRST_RETRY, ended);
        return ended;
    }

    private void attempt(
            Transaction transaction,
            Function<Transaction, CompletableFuture<Void>> end,
            String what,
            int attempt,
            Duration wait,
            CompletableFuture<Void> ended) {
        CompletableFuture<Void> answer;
        try {
            answer = end.apply(transaction);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((done, error) -> {
            if (error == null) {
                if (attempt > 1) {
                    log.info(
                            "subscription '{}': the {} of transaction {} went through at attempt {}",
                            subscription,
                            what,
                            transaction.getTxnID(),
                            attempt);
                }
                ended.complete(null);
                return;
            }
            Throwable cause = unwrap(error);
            if (stopped.getAsBoolean()) {
                // Its client is closed (the end may have failed because of that): the coordinator's recovery, or its
                // timeout for an open transaction, ends it.
                ended.completeExceptionally(cause);
                return;
            }
            if (isFinal(cause)) {
                if (attempt > 1) {
                    log.info(
                            "subscription '{}': the {} of transaction {} was answered for good at attempt {} ({})",
                            subscription,
                            what,
                            transaction.getTxnID(),
                            attempt,
                            cause.toString());
                }
                ended.completeExceptionally(cause);
                return;
            }
            if (attempt == 1) {
                log.warn(
                        "subscription '{}': the {} of transaction {} was not confirmed ({}); it is sent again until the"
                                + " coordinator answers, so the transaction does not stay half ended",
                        subscription,
                        what,
                        transaction.getTxnID(),
                        cause.toString());
            }
            Duration doubled = wait.multipliedBy(2);
            Duration next = doubled.compareTo(LONGEST_RETRY) > 0 ? LONGEST_RETRY : doubled;
            try {
                time.schedule(wait, () -> attempt(transaction, end, what, attempt + 1, next, ended));
            } catch (RejectedExecutionException stopped) {
                // The runtime stops: the coordinator ends the transaction when it is moved or restarted.
                ended.completeExceptionally(cause);
            }
        });
    }

    /**
     * Whether {@code error} is the end's final answer: the coordinator no longer knows the transaction (it ended it)
     * or finds it in another state (it timed out, or the client's own state refuses the end), the client aborted it
     * itself because a send of it failed, or the client is closed. Anything else (no answer in time, a connection
     * lost, a topic that refused) may have left it half ended.
     */
    static boolean isFinal(Throwable error) {
        return error instanceof TransactionCoordinatorClientException.TransactionNotFoundException
                || error instanceof TransactionCoordinatorClientException.InvalidTxnStatusException
                || error instanceof PulsarClientException.TransactionHasOperationFailedException
                || error instanceof PulsarClientException.AlreadyClosedException;
    }

    /** {@code error}'s cause when it is the {@link CompletionException} a future's stage wraps it in. */
    static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
