package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.InitialPosition;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.DeadLetterPolicy;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;

/** Turns a subscription of the manifest into the consumer Pulsar actually gets; nothing else sets consumer options. */
final class ConsumerSettings {
    private ConsumerSettings() {}

    static <T> ConsumerBuilder<T> builder(PulsarClient client, Schema<T> schema, SubscriptionSpec spec) {
        ConsumerBuilder<T> builder = client.newConsumer(schema)
                .subscriptionName(spec.name())
                .subscriptionType(type(spec.type()))
                .subscriptionInitialPosition(
                        spec.consumer().initialPosition() == InitialPosition.EARLIEST
                                ? SubscriptionInitialPosition.Earliest
                                : SubscriptionInitialPosition.Latest)
                .receiverQueueSize(spec.consumer().receiverQueueSize())
                .negativeAckRedeliveryBackoff(ZeroRedeliveryBackoff.INSTANCE)
                // Only when the broker has acknowledgmentAtBatchIndexLevelEnabled: client-side alone is worse
                // than neither (the redelivery count sticks and the dead-letter cap never fires).
                .enableBatchIndexAcknowledgment(spec.consumer().batchIndexAck());
        if (spec.topics().pattern().isPresent()) {
            builder.topicsPattern(spec.topics().pattern().get());
        } else {
            List<String> topics = new ArrayList<>(spec.topics().names());
            // durableDelays: the copies on the delay topic are read by the same subscription, as the same messages
            // (the broker holds a copy's delivery until its time only on Shared and Key_Shared, which the manifest
            // asks for).
            spec.retries().durableDelays().ifPresent(delays -> topics.add(delays.topic()));
            builder.topics(topics);
        }
        // Exactly what the manifest says, absent meaning none. Clients before Pulsar 3.0 turned on a 30 s ack
        // timeout whenever a dead-letter policy was set (removed by apache/pulsar#19486); a test keeps it so.
        spec.consumer()
                .ackTimeout()
                .ifPresent(timeout -> builder.ackTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS));
        spec.deadLetter().ifPresent(deadLetter -> {
            if (spec.acknowledgesAtOnce()) {
                // The client decides what to dead-letter from the batch entry as the broker last redelivered it,
                // before it drops the indexes it has acknowledged itself. An ack still waiting in the client's
                // group (100 ms by default) when a retry comes back within milliseconds therefore sends an
                // acknowledged sibling to the dead-letter topic too (measured with 4.2.4: all five of a batch).
                // Acks sent at once close that window, at the cost of one ack command per message.
                builder.acknowledgmentGroupTime(0, TimeUnit.MILLISECONDS);
            }
            if (spec.guarantee() == Guarantee.EXACTLY_ONCE) {
                // No client policy at exactly-once (issue 41): Settle writes every letter in a transaction with the
                // input's acknowledgement (docs/exactly-once.md). The client's own path (processPossibleToDLQ, run on
                // a negative acknowledgement past the cap) would send an uncaused letter outside any transaction and
                // acknowledge the input outside it too, also when another copy's transaction already settled it.
                return;
            }
            builder.deadLetterPolicy(DeadLetterPolicy.builder()
                    // The client delivers while the count is below the cap: attempts 1..maxAttempts.
                    .maxRedeliverCount(deadLetter.maxRedeliverCount())
                    .deadLetterTopic(deadLetter.topic())
                    // So dead letters are retained even before anyone subscribes to the dead-letter topic; none
                    // where the broker refuses to create subscriptions (allowAutoSubscriptionCreation=false).
                    .initialSubscriptionName(deadLetter.initialSubscription().orElse(null))
                    .build());
        });
        return builder;
    }

    static SubscriptionType type(SubscriptionKind kind) {
        return switch (kind) {
            case EXCLUSIVE -> SubscriptionType.Exclusive;
            case FAILOVER -> SubscriptionType.Failover;
            case SHARED -> SubscriptionType.Shared;
            case KEY_SHARED -> SubscriptionType.Key_Shared;
        };
    }
}
