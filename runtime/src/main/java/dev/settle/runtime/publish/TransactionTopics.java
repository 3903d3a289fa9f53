package dev.settle.runtime.publish;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.impl.PartitionedProducerImpl;
import org.apache.pulsar.client.impl.ProducerImpl;
import org.apache.pulsar.client.impl.transaction.TransactionImpl;

/**
 * When a transaction may send to a producer's topic without the client holding the send back. The Pulsar client
 * (4.2.4, {@code ProducerImpl.internalSendWithTxnAsync}) issues a send in a transaction only once the coordinator has
 * answered that the transaction writes the topic, which it asks at the transaction's first send there: a send of the
 * next transaction whose answer came first was written first, and a key's outputs could leave input order across two
 * transactions (a full build read 100 keys' first outputs after their second). Once this future is done, the client
 * issues the transaction's sends to the topic in the order they are made.
 */
final class TransactionTopics {
    private static final CompletableFuture<Void> NOTHING_TO_WAIT_FOR = CompletableFuture.completedFuture(null);

    private TransactionTopics() {}

    /**
     * Completes once {@code transaction} has registered every topic {@code producer} writes (each partition of a
     * partitioned topic: which one a message goes to is the client's router's choice), exceptionally when the
     * coordinator refused; asks the coordinator for those not asked yet (the client asks once a transaction and topic).
     * Done at once for a transaction that is not the client's own (a test's).
     */
    static CompletableFuture<Void> registered(Transaction transaction, Producer<?> producer) {
        if (!(transaction instanceof TransactionImpl client)) {
            return NOTHING_TO_WAIT_FOR;
        }
        if (!(producer instanceof PartitionedProducerImpl<?> partitioned)) {
            return client.registerProducedTopic(producer.getTopic());
        }
        List<? extends ProducerImpl<?>> partitions = partitioned.getProducers();
        CompletableFuture<?>[] each = new CompletableFuture<?>[partitions.size()];
        for (int i = 0; i < each.length; i++) {
            each[i] = client.registerProducedTopic(partitions.get(i).getTopic());
        }
        return CompletableFuture.allOf(each);
    }
}
