package dev.settle.runtime.driver;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * Where an exactly-once subscription's transactions come from: a Pulsar client with transactions on (the runtime's
 * {@code TransactionClient}). Thread-safe.
 */
public interface Transactions {
    /**
     * Begins a transaction the coordinator aborts once {@code timeout} has passed without a commit.
     *
     * @return completes with the open transaction; exceptionally when none can be begun (the cluster has no
     *     transaction coordinator, or cannot be reached)
     */
    CompletableFuture<Transaction> begin(Duration timeout);

    /**
     * Whether the runtime has closed them (it stops): a commit or an abort that fails now is not sent again. False by
     * default.
     */
    default boolean closed() {
        return false;
    }
}
