package dev.settle.runtime.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.impl.transaction.TransactionImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A transaction's outputs to a topic are sent in the order they were made, whenever the coordinator answers that
 * each transaction writes the topic. The client sends a transactional message only after that answer (asked at the
 * transaction's first send to the topic); when the next transaction's answer came first, its message was stored
 * first, and a key's outputs left input order (PipelinedOutputsVolumeIT read 100 keys' first outputs after their
 * second). Here the first transaction's answer is held back, as a slow coordinator would: the second transaction's
 * message waits behind the first's, and the topic holds them in the order they were made. With the wait taken out of
 * {@code PulsarOutputs} this test fails: the second is stored at once, first.
 */
class TransactionalSendOrderIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @ParameterizedTest(name = "partitions: {0}")
    @ValueSource(ints = {0, 3})
    void theNextTransactionsMessageWaitsWhileTheFirstOnesTopicIsNotRegisteredYet(int partitions) throws Exception {
        String topic = pulsar.topic("txn-send-order");
        if (partitions == 0) {
            pulsar.admin().topics().createNonPartitionedTopic(topic);
        } else {
            pulsar.admin().topics().createPartitionedTopic(topic, partitions);
        }
        try (PulsarClient client = PulsarClient.builder()
                        .serviceUrl(pulsar.endpoints().serviceUrl())
                        .enableTransaction(true)
                        .build();
                PulsarOutputs outputs = new PulsarOutputs(
                        () -> client, "order test", ProducerSettings.FUNCTIONS_DEFAULT, true, new ManualTime());
                Reader<String> reader = client.newReader(Schema.STRING)
                        .topic(topic)
                        .startMessageId(MessageId.earliest)
                        .create()) {
            // The producer exists first: only the transactions' registrations can hold a send back.
            outputs.prepare(topic, Schema.STRING);
            Waits.until("the producer made", Duration.ofSeconds(30), outputs::notReady, reason -> reason.isEmpty());

            Transaction first = begin(client);
            Transaction second = begin(client);
            // Every partition, as the key's partition is the router's choice.
            List<String> written = new ArrayList<>();
            for (var producer : outputs.producers()) {
                if (producer instanceof org.apache.pulsar.client.impl.PartitionedProducerImpl<?> partitioned) {
                    partitioned.getProducers().forEach(p -> written.add(p.getTopic()));
                } else {
                    written.add(producer.getTopic());
                }
            }
            // The first transaction's registration, held back: the client (and Settle) wait on this future.
            CompletableFuture<Void> answer = new CompletableFuture<>();
            written.forEach(
                    name -> ((TransactionImpl) first).getRegisterPartitionMap().put(name, answer));

            CompletableFuture<MessageId> firstSent = outputs.newMessage(topic, Schema.STRING, first)
                    .key("k")
                    .value("first")
                    .sendAsync();
            CompletableFuture<MessageId> secondSent = outputs.newMessage(topic, Schema.STRING, second)
                    .key("k")
                    .value("second")
                    .sendAsync();
            Waits.during(
                    "the second transaction's message waiting behind the first's",
                    Duration.ofSeconds(1),
                    () -> !secondSent.isDone(),
                    () -> secondSent);

            // The coordinator's answer, for real, then released.
            ((TransactionImpl) first)
                    .getTcClient()
                    .addPublishPartitionToTxnAsync(first.getTxnID(), written)
                    .get(30, TimeUnit.SECONDS);
            answer.complete(null);
            firstSent.get(30, TimeUnit.SECONDS);
            secondSent.get(30, TimeUnit.SECONDS);
            first.commit().get(30, TimeUnit.SECONDS);
            second.commit().get(30, TimeUnit.SECONDS);

            List<String> read = new ArrayList<>();
            while (read.size() < 2) {
                Message<String> message = reader.readNext(30, TimeUnit.SECONDS);
                assertThat(message)
                        .as("a message within 30 s; read so far: %s", read)
                        .isNotNull();
                read.add(message.getValue());
            }
            assertThat(read).containsExactly("first", "second");
        }
    }

    @Test
    void aTransactionWhoseTopicIsRegisteredSendsAtOnce() throws Exception {
        String topic = pulsar.topic("txn-send-at-once");
        pulsar.admin().topics().createNonPartitionedTopic(topic);
        try (PulsarClient client = PulsarClient.builder()
                        .serviceUrl(pulsar.endpoints().serviceUrl())
                        .enableTransaction(true)
                        .build();
                PulsarOutputs outputs = new PulsarOutputs(
                        () -> client, "order test", ProducerSettings.FUNCTIONS_DEFAULT, true, new ManualTime())) {
            outputs.prepare(topic, Schema.STRING);
            Waits.until("the producer made", Duration.ofSeconds(30), outputs::notReady, reason -> reason.isEmpty());
            Transaction transaction = begin(client);
            outputs.newMessage(topic, Schema.STRING, transaction)
                    .value("one")
                    .sendAsync()
                    .get(30, TimeUnit.SECONDS);

            // Registered now: the next message goes to the producer itself, not to a builder that waits.
            assertThat(outputs.newMessage(topic, Schema.STRING, transaction)).isInstanceOf(TrackedMessageBuilder.class);
            transaction.abort().get(30, TimeUnit.SECONDS);
        }
    }

    private static Transaction begin(PulsarClient client) throws Exception {
        return client.newTransaction()
                .withTransactionTimeout(1, TimeUnit.MINUTES)
                .build()
                .get(30, TimeUnit.SECONDS);
    }
}
