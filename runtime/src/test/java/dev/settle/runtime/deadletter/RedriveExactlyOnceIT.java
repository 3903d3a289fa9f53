package dev.settle.runtime.deadletter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.HoldForFix;
import dev.settle.runtime.manifest.Topics;
import dev.settle.testbroker.PulsarFixture;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The re-drive at {@code guarantee: exactly-once}, on a real broker with transactions (docs/dead-letters.md, "Hold for
 * a fix"): a held copy's send back to its topic and its acknowledgement on the held topic are one transaction. Aborted
 * (a kill or a failure between the two ends so: the coordinator aborts a transaction nobody commits), neither
 * happened: nothing is read on the topic and the copy is still held; the next run sends it back exactly once.
 */
class RedriveExactlyOnceIT {
    private static final HeldBy GENERATION_1 = new HeldBy(1, "aa11");
    private static final HeldBy GENERATION_2 = new HeldBy(2, "bb22");

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void aHeldCopysSendBackAndAcknowledgementAreOneTransactionAbortedNeitherHappened() throws Exception {
        String topic = pulsar.topic("redrive-eo");
        String held = topic + "-held";
        pulsar.admin().topics().createNonPartitionedTopic(topic);
        pulsar.admin().topics().createNonPartitionedTopic(held);
        pulsar.admin().topics().createSubscription(topic, "reader", MessageId.earliest);
        pulsar.admin().topics().createSubscription(held, HoldForFix.REDRIVE_SUBSCRIPTION, MessageId.earliest);
        try (PulsarClient transactional = PulsarClient.builder()
                        .serviceUrl(pulsar.endpoints().serviceUrl())
                        .enableTransaction(true)
                        .build();
                Producer<String> holding =
                        pulsar.client().newProducer(Schema.STRING).topic(held).create();
                Consumer<String> reader = pulsar.client()
                        .newConsumer(Schema.STRING)
                        .topic(topic)
                        .subscriptionName("reader")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .subscribe()) {
            holding.newMessage()
                    .key("k")
                    .value("held by generation 1")
                    .properties(heldBy(GENERATION_1, topic))
                    .send();
            Redrive redrive = new Redrive(pulsar.client(), held, targets(topic, held), 0)
                    .inTransactions(() -> transactional
                            .newTransaction()
                            .withTransactionTimeout(1, TimeUnit.MINUTES)
                            .build());

            // The run's own step, in a transaction that is then aborted instead of committed.
            try (Replay.Waiting waiting = new Replay.Waiting(pulsar.client()
                            .newConsumer(Schema.BYTES)
                            .topic(held)
                            .subscriptionName(HoldForFix.REDRIVE_SUBSCRIPTION)
                            .subscriptionType(SubscriptionType.Exclusive)
                            .subscribe());
                    Producer<byte[]> producer = redrive.producer(topic)) {
                Message<byte[]> copy = waiting.next();
                assertThat(copy).as("the held copy").isNotNull();
                Transaction transaction = transactional
                        .newTransaction()
                        .withTransactionTimeout(1, TimeUnit.MINUTES)
                        .build()
                        .get(30, TimeUnit.SECONDS);
                redrive.sendBack(waiting, copy, producer, transaction);
                transaction.abort().get(30, TimeUnit.SECONDS);
            }
            assertThat(reader.receive(3, TimeUnit.SECONDS))
                    .as("the copy sent back in the aborted transaction")
                    .isNull();
            assertThat(heldBacklog(held)).as("held copies still waiting").isEqualTo(1);

            Redrive.Counts counts = redrive.run(code -> !GENERATION_2.sameCode(code), (copy, decision) -> {});

            List<String> read = new ArrayList<>();
            for (Message<String> message = reader.receive(10, TimeUnit.SECONDS);
                    message != null;
                    message = reader.receive(3, TimeUnit.SECONDS)) {
                read.add(message.getKey() + "=" + message.getValue());
                reader.acknowledge(message);
            }
            assertThat(counts.redriven()).isEqualTo(1);
            assertThat(read).containsExactly("k=held by generation 1");
            assertThat(heldBacklog(held)).as("held copies still waiting").isZero();
        }
    }

    private long heldBacklog(String held) throws Exception {
        return pulsar.admin()
                .topics()
                .getStats(held)
                .getSubscriptions()
                .get(HoldForFix.REDRIVE_SUBSCRIPTION)
                .getMsgBacklog();
    }

    private static ReplayRules.Targets targets(String topic, String held) {
        return new ReplayRules.Targets("orders", Topics.named(List.of(topic)), List.of(held));
    }

    private static Map<String, String> heldBy(HeldBy by, String topic) {
        Map<String, String> properties = new HashMap<>(by.properties());
        properties.put(DeadLetterProperties.REAL_TOPIC, topic);
        properties.put(DeadLetterProperties.REAL_SUBSCRIPTION, "orders");
        properties.put(DeadLetterProperties.SUBSCRIPTION, "orders");
        properties.put(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.IllegalStateException");
        properties.put(DeadLetterProperties.ATTEMPTS, "5");
        return properties;
    }
}
