package dev.settle.runtime.preflight;

import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;

/**
 * The checks of the broker's settings a subscription relies on: the transaction coordinator, batch-index
 * acknowledgement, deduplication and delayed delivery on its outputs, and the unacked limit against its receiver
 * queue. A namespace's own policy is read first where it has one, then the broker's setting.
 */
final class BrokerSettingChecks {
    private final Optional<BrokerRest> rest;
    private final BrokerSettings settings;
    /** Null when no probe was given: then an unreadable coordinator setting is could-not-check. */
    private final Optional<BrokerPreflight.TransactionProbe> transactionProbe;

    BrokerSettingChecks(
            Optional<BrokerRest> rest,
            BrokerSettings settings,
            Optional<BrokerPreflight.TransactionProbe> transactionProbe) {
        this.rest = rest;
        this.settings = settings;
        this.transactionProbe = transactionProbe;
    }

    Check coordinator(String name) {
        BrokerSettings.Reading enabled = settings.read("transactionCoordinatorEnabled");
        if (enabled.value().isPresent()) {
            return enabled.is("true")
                    ? Check.ok(name, "transaction-coordinator", "transactionCoordinatorEnabled=true")
                    : Check.failed(
                            name,
                            "transaction-coordinator",
                            true,
                            "guarantee: exactly-once needs the broker's transaction coordinator, and the broker has"
                                    + " transactionCoordinatorEnabled="
                                    + enabled.value().get() + ": set it to true"
                                    + " on every broker (with systemTopicEnabled=true) and initialise the"
                                    + " coordinator's metadata once (pulsar initialize-transaction-coordinator-metadata)");
        }
        if (transactionProbe.isEmpty()) {
            return Check.couldNotCheck(name, "transaction-coordinator", enabled.whyNot());
        }
        try {
            transactionProbe.get().beginAndAbort();
            return Check.ok(
                    name, "transaction-coordinator", "a transaction was begun and aborted (" + enabled.whyNot() + ")");
        } catch (Exception e) {
            return Check.failed(
                    name,
                    "transaction-coordinator",
                    true,
                    "guarantee: exactly-once needs the broker's transaction coordinator, and no transaction could be"
                            + " begun (" + e + "): enable transactionCoordinatorEnabled on the brokers");
        }
    }

    Check batchIndexAck(SubscriptionSpec spec, boolean batched) {
        String name = spec.name();
        BrokerSettings.Reading enabled = settings.read("acknowledgmentAtBatchIndexLevelEnabled");
        if (enabled.value().isEmpty()) {
            return Check.couldNotCheck(name, "batch-index-ack", enabled.whyNot());
        }
        if (enabled.is("true")) {
            return Check.ok(name, "batch-index-ack", "acknowledgmentAtBatchIndexLevelEnabled=true");
        }
        if (spec.consumer().batchIndexAck()) {
            return Check.failed(
                    name,
                    "batch-index-ack",
                    true,
                    "batchIndexAck: true, and the broker has acknowledgmentAtBatchIndexLevelEnabled=false: the"
                            + " client's side alone keeps a batched message's redelivery count from rising, so its"
                            + " cap never fires; set acknowledgmentAtBatchIndexLevelEnabled=true on the brokers, or"
                            + " remove batchIndexAck");
        }
        if (!batched) {
            return Check.ok(
                    name,
                    "batch-index-ack",
                    "acknowledgmentAtBatchIndexLevelEnabled=false, and no input's latest message is a batch (should"
                            + " producers batch later, set it to true on the brokers)");
        }
        boolean exactlyOnce = spec.guarantee() == Guarantee.EXACTLY_ONCE;
        return Check.failed(
                name,
                "batch-index-ack",
                exactlyOnce,
                "an input receives batches and the broker has acknowledgmentAtBatchIndexLevelEnabled=false: "
                        + (exactlyOnce
                                ? "a transaction cannot acknowledge one message of a batch (apache/pulsar#17061)"
                                : "a retried message brings its whole batch back, and the cap dead-letters its"
                                        + " acknowledged siblings")
                        + "; set acknowledgmentAtBatchIndexLevelEnabled=true on the brokers and batchIndexAck: true"
                        + ", or publish without batching");
    }

    Check deduplication(String name, String topic) {
        Optional<Boolean> enabled = Optional.empty();
        String source = "";
        String whyNot = "";
        if (rest.isPresent()) {
            try {
                BrokerRest.Answer namespace = rest.get().get(AdminPaths.namespacePath(topic) + "/deduplication");
                if (namespace.ok() && namespace.json() instanceof Boolean set) {
                    enabled = Optional.of(set);
                    source = "the namespace's deduplication";
                } else if (!namespace.ok()) {
                    whyNot = namespace.describe() + "; ";
                }
            } catch (IOException | RuntimeException e) {
                whyNot = e.getMessage() + "; ";
            }
        }
        if (enabled.isEmpty()) {
            BrokerSettings.Reading broker = settings.read("brokerDeduplicationEnabled");
            if (broker.value().isEmpty()) {
                return Check.couldNotCheck(name, "deduplication", whyNot + broker.whyNot());
            }
            enabled = Optional.of(broker.is("true"));
            source = "brokerDeduplicationEnabled";
        }
        if (enabled.get()) {
            return Check.ok(name, "deduplication", topic + ": on (" + source + ")");
        }
        return Check.failed(
                name,
                "deduplication",
                false,
                topic + ": off (" + source + "=false): a send the broker stored without confirming it before a"
                        + " restart is sent again into the same transaction and read twice; turn it on"
                        + " (pulsar-admin namespaces set-deduplication --enable " + AdminPaths.namespace(topic)
                        + ", or brokerDeduplicationEnabled=true)");
    }

    Check delayedDelivery(String name, String topic) {
        if (rest.isPresent()) {
            try {
                BrokerRest.Answer namespace = rest.get().get(AdminPaths.namespacePath(topic) + "/delayedDelivery");
                if (namespace.ok()
                        && namespace.json() instanceof Map<?, ?> map
                        && map.get("active") instanceof Boolean active) {
                    return delayed(name, topic, active, "the namespace's delayedDelivery");
                }
            } catch (IOException | RuntimeException e) {
                // Falls back to the broker's setting.
            }
        }
        BrokerSettings.Reading broker = settings.read("delayedDeliveryEnabled");
        if (broker.value().isEmpty()) {
            return Check.couldNotCheck(name, "delayed-delivery", broker.whyNot());
        }
        return delayed(name, topic, broker.is("true"), "delayedDeliveryEnabled");
    }

    private static Check delayed(String name, String topic, boolean active, String source) {
        return active
                ? Check.ok(name, "delayed-delivery", topic + ": on (" + source + ")")
                : Check.failed(
                        name,
                        "delayed-delivery",
                        false,
                        topic + ": off (" + source + "=false): outputs sent with deliverAt or deliverAfter are"
                                + " delivered at once; set delayedDeliveryEnabled=true on the brokers (or pulsar-admin"
                                + " namespaces set-delayed-delivery --enable " + AdminPaths.namespace(topic) + ")");
    }

    /** The broker stops dispatching to a consumer at its unacked limit; a receiver queue above it never fills. */
    Check unackedLimit(SubscriptionSpec spec, String topic) {
        String name = spec.name();
        Optional<Integer> limit = Optional.empty();
        String source = "";
        if (rest.isPresent()) {
            try {
                BrokerRest.Answer namespace =
                        rest.get().get(AdminPaths.namespacePath(topic) + "/maxUnackedMessagesPerConsumer");
                if (namespace.ok() && namespace.json() instanceof Number set) {
                    limit = Optional.of(set.intValue());
                    source = "the namespace's maxUnackedMessagesPerConsumer";
                }
            } catch (IOException | RuntimeException e) {
                // Falls back to the broker's setting.
            }
        }
        if (limit.isEmpty()) {
            BrokerSettings.Reading broker = settings.read("maxUnackedMessagesPerConsumer");
            if (broker.value().isEmpty()) {
                return Check.couldNotCheck(name, "unacked-limit", broker.whyNot());
            }
            limit = Optional.of(Integer.parseInt(broker.value().get().strip()));
            source = "maxUnackedMessagesPerConsumer";
        }
        int queue = spec.consumer().receiverQueueSize();
        int needed = queue + spec.concurrency();
        if (limit.get() == 0 || limit.get() >= needed) {
            return Check.ok(
                    name,
                    "unacked-limit",
                    source + "=" + limit.get()
                            + (limit.get() == 0
                                    ? " (none)"
                                    : ", above the receiver queue (" + queue + ") and the calls in flight ("
                                            + spec.concurrency() + ")"));
        }
        return Check.failed(
                name,
                "unacked-limit",
                false,
                source + "=" + limit.get() + " is below the receiver queue (" + queue + ") plus the calls in flight ("
                        + spec.concurrency() + "), and held retries count too: the broker stops dispatching to the"
                        + " consumer before its queue fills; lower receiverQueueSize or raise the limit");
    }
}
