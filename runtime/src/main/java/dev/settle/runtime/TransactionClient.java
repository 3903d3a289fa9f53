package dev.settle.runtime;

import dev.settle.runtime.driver.Transactions;
import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.runtime.observe.PulsarClientLogFilter;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transactions of exactly-once subscriptions (docs/exactly-once.md), from a Pulsar client of their own with
 * transactions on. A client with transactions on connects to the transaction coordinator while it is built, and its
 * build fails when the coordinator cannot be reached or is off; the runtime's own client is built without a broker
 * (outages are waited out, unready), so this one is made apart, in the background, at the first exactly-once
 * subscription, and asked for again every {@link #RETRY} until it exists. Meanwhile {@link #notReady()} says why in
 * plain words, once in the log and in {@code /readyz}, and those subscriptions wait unready. Producers and consumers
 * of the runtime's client send and acknowledge in its transactions: a transaction is known to the brokers by its id,
 * not by the connection that began it.
 */
final class TransactionClient implements Transactions, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TransactionClient.class);
    static final Duration RETRY = Duration.ofSeconds(5);

    private final PulsarSettings settings;
    private final Time time;

    private volatile PulsarClient client;
    private volatile String notReady = "connecting to the cluster's transaction coordinator";
    private volatile boolean closed;
    /** Guarded by this. */
    private Thread connecting;

    TransactionClient(PulsarSettings settings, Time time) {
        this.settings = settings;
        this.time = time;
    }

    /** Starts making the client in the background, unless it was started already. */
    synchronized void start() {
        if (connecting != null || closed) {
            return;
        }
        connecting = new Thread(this::connect, PulsarClientLogFilter.TRANSACTIONS_THREAD);
        connecting.setDaemon(true);
        connecting.start();
    }

    private void connect() {
        String lastFailure = null;
        while (!closed) {
            try {
                PulsarClient made = PulsarClients.createWithTransactions(settings);
                if (closed) {
                    made.closeAsync();
                    return;
                }
                client = made;
                notReady = null;
                if (lastFailure != null) {
                    log.info("transactions can be begun now: the exactly-once subscriptions start");
                }
                return;
            } catch (PulsarClientException | RuntimeException e) {
                String why = explain(e);
                notReady = why;
                if (!why.equals(lastFailure)) {
                    // One line, no stack: what to do is all the reader needs, and it repeats only when it changes.
                    log.error("{}", why);
                }
                lastFailure = why;
            }
            try {
                time.await(() -> closed, RETRY);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** What is wrong, as a person can act on it. */
    static String explain(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String message = cause.getMessage() == null
                ? cause.getClass().getSimpleName()
                : cause.getClass().getSimpleName() + ": "
                        + cause.getMessage().lines().findFirst().orElse("");
        return "exactly-once subscriptions cannot begin transactions: the cluster's transaction coordinator does not"
                + " answer (" + message + "). If the brokers run with transactions off, enable"
                + " transactionCoordinatorEnabled on the brokers (with systemTopicEnabled, and initialise the"
                + " coordinator's metadata once: pulsar initialize-transaction-coordinator-metadata); else check that"
                + " the cluster can be reached. Asked again every " + RETRY.toSeconds()
                + " s; those subscriptions stay unready until then";
    }

    /** Why no transaction can be begun yet; empty once the client exists. */
    Optional<String> notReady() {
        return Optional.ofNullable(notReady);
    }

    @Override
    public CompletableFuture<Transaction> begin(Duration timeout) {
        PulsarClient made = client;
        if (made == null) {
            return CompletableFuture.failedFuture(new IllegalStateException(notReady));
        }
        return made.newTransaction()
                .withTransactionTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .build();
    }

    @Override
    public boolean closed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
        PulsarClient made = client;
        if (made != null) {
            // Transactions left open are aborted by the coordinator at their timeout; nothing to wait for.
            made.closeAsync().exceptionally(e -> {
                log.warn("closing the transactions' Pulsar client failed", e);
                return null;
            });
        }
    }
}
