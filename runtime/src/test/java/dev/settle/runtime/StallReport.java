package dev.settle.runtime;

import dev.settle.testbroker.PulsarEndpoints;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.common.policies.data.ConsumerStats;
import org.apache.pulsar.common.policies.data.SubscriptionStats;
import org.apache.pulsar.common.policies.data.TopicStats;
import org.apache.pulsar.common.policies.data.TransactionPendingAckStats;

/**
 * What an integration test prints when a message it waits for is not handled in time: enough to tell a message the
 * broker never dispatched (backlog, its consumers' permits) from one stuck in Settle (the drivers' permits and
 * consumers, every thread's stack). Written for a stall seen once in LiveCodeIT (issue 41); any IT that runs Settle in
 * its own JVM can put {@link #of} in its failure message.
 */
public final class StallReport {
    /** How long each part may take: a part stuck on the very thing that stalled must not hang the report. */
    private static final Duration EACH_PART = Duration.ofSeconds(10);

    private StallReport() {}

    /** The report on {@code topic} and the Settles running in this JVM. */
    public static String of(PulsarEndpoints pulsar, String topic, List<Settle> settles) {
        StringBuilder report = new StringBuilder("\n--- Settle's drivers ---\n");
        for (Settle settle : settles) {
            report.append(within(settle::describeDrivers)).append('\n');
        }
        report.append("--- the broker's stats of ")
                .append(topic)
                .append(" ---\n")
                .append(within(() -> topicStats(pulsar, topic)))
                .append("\n--- threads ---\n")
                .append(threads());
        return report.toString();
    }

    private static String within(Supplier<String> part) {
        try {
            return CompletableFuture.supplyAsync(part).get(EACH_PART.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            return "(not read within " + EACH_PART.toSeconds() + " s: " + e + ")";
        }
    }

    private static String topicStats(PulsarEndpoints pulsar, String topic) {
        try (PulsarAdmin admin =
                PulsarAdmin.builder().serviceHttpUrl(pulsar.adminUrl()).build()) {
            TopicStats stats = admin.topics().getStats(topic);
            StringBuilder text = new StringBuilder("in ")
                    .append(stats.getMsgInCounter())
                    .append(", out ")
                    .append(stats.getMsgOutCounter());
            stats.getSubscriptions().forEach((name, subscription) -> {
                subscription(text, name, subscription);
                pendingAcknowledgements(text, admin, topic, name);
            });
            return text.toString();
        } catch (Exception e) {
            return "(not read: " + e + ")";
        }
    }

    private static void subscription(StringBuilder text, String name, SubscriptionStats subscription) {
        text.append("\nsubscription ")
                .append(name)
                .append(" (")
                .append(subscription.getType())
                .append("): backlog ")
                .append(subscription.getMsgBacklog())
                .append(", unacknowledged ")
                .append(subscription.getUnackedMessages())
                .append(", blocked on unacknowledged ")
                .append(subscription.isBlockedSubscriptionOnUnackedMsgs())
                .append(", out ")
                .append(subscription.getMsgOutCounter())
                .append(", delayed ")
                .append(subscription.getMsgDelayed());
        for (ConsumerStats consumer : subscription.getConsumers()) {
            text.append("\n  consumer ")
                    .append(consumer.getConsumerName())
                    .append(": permits ")
                    .append(consumer.getAvailablePermits())
                    .append(", unacknowledged ")
                    .append(consumer.getUnackedMessages())
                    .append(", blocked on unacknowledged ")
                    .append(consumer.isBlockedConsumerOnUnackedMsgs())
                    .append(", out ")
                    .append(consumer.getMsgOutCounter())
                    .append(", connected since ")
                    .append(consumer.getConnectedSince());
        }
    }

    /**
     * The transactions holding acknowledgements of the subscription's messages, not committed or aborted yet: a message
     * in one is not dispatched again until it ends (an exactly-once stall's first suspect).
     */
    private static void pendingAcknowledgements(StringBuilder text, PulsarAdmin admin, String topic, String name) {
        try {
            TransactionPendingAckStats pending = admin.transactions().getPendingAckStats(topic, name, false);
            text.append("\n  transactions holding acknowledgements: ").append(pending.ongoingTxnSize);
        } catch (Exception e) {
            // A broker without transactions has no pending-acknowledgement store to read.
            text.append("\n  transactions holding acknowledgements: not read (")
                    .append(e.getMessage())
                    .append(')');
        }
    }

    /** Every thread's state, lock and whole stack (ThreadInfo's own text stops at eight frames). */
    private static String threads() {
        StringBuilder text = new StringBuilder();
        for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
            text.append('"').append(thread.getThreadName()).append("\" ").append(thread.getThreadState());
            if (thread.getLockName() != null) {
                text.append(" on ").append(thread.getLockName());
            }
            if (thread.getLockOwnerName() != null) {
                text.append(" held by \"").append(thread.getLockOwnerName()).append('"');
            }
            text.append('\n');
            for (StackTraceElement frame : thread.getStackTrace()) {
                text.append("    at ").append(frame).append('\n');
            }
        }
        return text.toString();
    }
}
