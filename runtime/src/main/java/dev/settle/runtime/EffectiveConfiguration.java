package dev.settle.runtime;

import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.InitialPosition;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.DeadLetterPolicy;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.impl.ConsumerBase;
import org.apache.pulsar.client.impl.ProducerBase;
import org.apache.pulsar.client.impl.PulsarClientImpl;
import org.apache.pulsar.client.impl.conf.ClientConfigurationData;
import org.apache.pulsar.client.impl.conf.ConsumerConfigurationData;
import org.apache.pulsar.client.impl.conf.ProducerConfigurationData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /config/effective} on the admin port (docs/observability.md): what the live client, each subscription's
 * consumer and its producers run with, read from the client's own objects ({@code ConsumerBase#getConf},
 * {@code ProducerBase#getConfiguration}, {@code PulsarClientImpl#getConfiguration}), not from the manifest, in the
 * client's own names. Only settings are picked, one by one: the authentication's class but never its parameters,
 * tokens or passwords, and no TLS key material. Each subscription also lists the consumer settings whose value in force
 * is not what its manifest says ({@link #differences}), which {@code settle_config_differences} counts.
 */
final class EffectiveConfiguration {
    private static final Logger log = LoggerFactory.getLogger(EffectiveConfiguration.class);

    private EffectiveConfiguration() {}

    /** A consumer setting, in the client's own name, whose value in force is not the manifest's. */
    record Difference(String setting, Object manifest, Object inForce) {
        @Override
        public String toString() {
            return setting + " is " + inForce + " where the manifest says " + manifest;
        }
    }

    static Map<String, Object> of(
            PulsarClient client, Collection<RunningSubscription> running, Optional<String> transactionsNotReady) {
        Map<String, Object> effective = new LinkedHashMap<>();
        effective.put("client", client == null ? null : client(client));
        Map<String, Object> subscriptions = new LinkedHashMap<>();
        for (RunningSubscription subscription : running) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put(
                    "consumer",
                    subscription
                            .driver()
                            .flatMap(driver -> driver.consumer())
                            .map(EffectiveConfiguration::consumer)
                            .orElse(null));
            one.put(
                    "differences",
                    subscription
                            .driver()
                            .flatMap(driver -> driver.consumer())
                            .map(consumer -> differences(subscription.spec(), consumer).stream()
                                    .map(EffectiveConfiguration::json)
                                    .toList())
                            .orElse(List.of()));
            if (subscription.spec().guarantee() == Guarantee.EXACTLY_ONCE) {
                one.put(
                        "transactionTimeoutMillis",
                        SubscriptionDriver.transactionTimeout(subscription.spec())
                                .toMillis());
            }
            List<Object> producers = new ArrayList<>();
            for (Producer<?> producer : subscription.outputs().producers()) {
                producers.add(producer(producer));
            }
            one.put("producers", producers);
            subscriptions.put(subscription.name(), one);
        }
        effective.put("subscriptions", subscriptions);
        effective.put(
                "transactions",
                transactionsNotReady
                        .map(why -> (Object) Map.of("ready", false, "why", why))
                        .orElse(Map.of("ready", true)));
        return effective;
    }

    private static Map<String, Object> client(PulsarClient client) {
        if (!(client instanceof PulsarClientImpl impl)) {
            return Map.of("unreadable", client.getClass().getName());
        }
        ClientConfigurationData conf = impl.getConfiguration();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("serviceUrl", conf.getServiceUrl());
        out.put(
                "authentication",
                conf.getAuthentication() == null
                        ? null
                        : conf.getAuthentication().getClass().getName());
        out.put("operationTimeoutMs", conf.getOperationTimeoutMs());
        out.put("connectionTimeoutMs", conf.getConnectionTimeoutMs());
        out.put("keepAliveIntervalSeconds", conf.getKeepAliveIntervalSeconds());
        out.put("numIoThreads", conf.getNumIoThreads());
        out.put("numListenerThreads", conf.getNumListenerThreads());
        out.put("connectionsPerBroker", conf.getConnectionsPerBroker());
        out.put("memoryLimitBytes", conf.getMemoryLimitBytes());
        out.put("maxBackoffIntervalNanos", conf.getMaxBackoffIntervalNanos());
        out.put("enableTransaction", conf.isEnableTransaction());
        out.put("useTls", conf.isUseTls());
        out.put("tlsHostnameVerificationEnable", conf.isTlsHostnameVerificationEnable());
        return out;
    }

    private static Map<String, Object> consumer(Consumer<?> consumer) {
        if (!(consumer instanceof ConsumerBase<?> base)) {
            return Map.of("unreadable", consumer.getClass().getName());
        }
        ConsumerConfigurationData<?> conf = base.getConf();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topicNames", List.copyOf(new java.util.TreeSet<>(conf.getTopicNames())));
        out.put(
                "topicsPattern",
                conf.getTopicsPattern() == null ? null : conf.getTopicsPattern().pattern());
        out.put("subscriptionName", conf.getSubscriptionName());
        out.put("subscriptionType", conf.getSubscriptionType().name());
        out.put("subscriptionMode", conf.getSubscriptionMode().name());
        out.put(
                "subscriptionInitialPosition",
                conf.getSubscriptionInitialPosition().name());
        out.put("receiverQueueSize", conf.getReceiverQueueSize());
        out.put("maxTotalReceiverQueueSizeAcrossPartitions", conf.getMaxTotalReceiverQueueSizeAcrossPartitions());
        out.put("ackTimeoutMillis", conf.getAckTimeoutMillis());
        out.put("tickDurationMillis", conf.getTickDurationMillis());
        out.put("negativeAckRedeliveryDelayMicros", conf.getNegativeAckRedeliveryDelayMicros());
        out.put(
                "negativeAckRedeliveryBackoff",
                conf.getNegativeAckRedeliveryBackoff() == null
                        ? null
                        : conf.getNegativeAckRedeliveryBackoff().getClass().getName());
        out.put("acknowledgementsGroupTimeMicros", conf.getAcknowledgementsGroupTimeMicros());
        out.put("batchIndexAckEnabled", conf.isBatchIndexAckEnabled());
        out.put("ackReceiptEnabled", conf.isAckReceiptEnabled());
        out.put("retryEnable", conf.isRetryEnable());
        out.put("poolMessages", conf.isPoolMessages());
        out.put("priorityLevel", conf.getPriorityLevel());
        out.put("cryptoFailureAction", conf.getCryptoFailureAction().name());
        DeadLetterPolicy letters = conf.getDeadLetterPolicy();
        if (letters == null) {
            out.put("deadLetterPolicy", null);
        } else {
            Map<String, Object> policy = new LinkedHashMap<>();
            policy.put("maxRedeliverCount", letters.getMaxRedeliverCount());
            policy.put("deadLetterTopic", letters.getDeadLetterTopic());
            policy.put("initialSubscriptionName", letters.getInitialSubscriptionName());
            policy.put("retryLetterTopic", letters.getRetryLetterTopic());
            out.put("deadLetterPolicy", policy);
        }
        return out;
    }

    private static Map<String, Object> producer(Producer<?> producer) {
        if (!(producer instanceof ProducerBase<?> base)) {
            return Map.of("unreadable", producer.getClass().getName());
        }
        ProducerConfigurationData conf = base.getConfiguration();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topicName", conf.getTopicName());
        out.put("sendTimeoutMs", conf.getSendTimeoutMs());
        out.put("blockIfQueueFull", conf.isBlockIfQueueFull());
        out.put("maxPendingMessages", conf.getMaxPendingMessages());
        out.put("batchingEnabled", conf.isBatchingEnabled());
        out.put("batchingMaxPublishDelayMicros", conf.getBatchingMaxPublishDelayMicros());
        out.put("batchingMaxMessages", conf.getBatchingMaxMessages());
        out.put("batchingMaxBytes", conf.getBatchingMaxBytes());
        out.put("compressionType", conf.getCompressionType().name());
        out.put("chunkingEnabled", conf.isChunkingEnabled());
        out.put("accessMode", conf.getAccessMode().name());
        out.put(
                "messageRoutingMode",
                conf.getMessageRoutingMode() == null
                        ? null
                        : conf.getMessageRoutingMode().name());
        out.put("hashingScheme", conf.getHashingScheme().name());
        return out;
    }

    /**
     * The consumer settings a manifest states (or defaults) whose value in the live consumer differs: what a client that
     * accepts a setting and runs with another would hide (Pulsar's own runtimes did: apache/pulsar #26397, #26409).
     * Empty when the consumer is not the client's own class.
     */
    static List<Difference> differences(SubscriptionSpec spec, Consumer<?> consumer) {
        return consumer instanceof ConsumerBase<?> base ? differences(spec, base.getConf()) : List.of();
    }

    /** {@link #differences(SubscriptionSpec, Consumer)} of a consumer's configuration. */
    static List<Difference> differences(SubscriptionSpec spec, ConsumerConfigurationData<?> conf) {
        List<Difference> differences = new ArrayList<>();
        compare(differences, "subscriptionName", spec.name(), conf.getSubscriptionName());
        compare(
                differences,
                "subscriptionType",
                spec.type().manifestName(),
                conf.getSubscriptionType().name());
        compare(
                differences,
                "subscriptionInitialPosition",
                spec.consumer().initialPosition() == InitialPosition.EARLIEST ? "Earliest" : "Latest",
                conf.getSubscriptionInitialPosition().name());
        compare(differences, "receiverQueueSize", spec.consumer().receiverQueueSize(), conf.getReceiverQueueSize());
        compare(
                differences,
                "ackTimeoutMillis",
                spec.consumer().ackTimeout().map(Duration::toMillis).orElse(0L),
                conf.getAckTimeoutMillis());
        compare(differences, "batchIndexAckEnabled", spec.consumer().batchIndexAck(), conf.isBatchIndexAckEnabled());
        if (spec.topics().pattern().isEmpty()) {
            compare(
                    differences,
                    "topicNames",
                    new TreeSet<>(spec.topics().names()),
                    new TreeSet<>(conf.getTopicNames()));
        }
        // At exactly-once the client has no dead-letter policy: Settle writes every letter (docs/exactly-once.md).
        Optional<DeadLetter> letters =
                spec.guarantee() == Guarantee.EXACTLY_ONCE ? Optional.empty() : spec.deadLetter();
        DeadLetterPolicy policy = conf.getDeadLetterPolicy();
        compare(
                differences,
                "deadLetterPolicy.maxRedeliverCount",
                letters.map(DeadLetter::maxRedeliverCount).orElse(null),
                policy == null ? null : policy.getMaxRedeliverCount());
        compare(
                differences,
                "deadLetterPolicy.deadLetterTopic",
                letters.map(DeadLetter::topic).orElse(null),
                policy == null ? null : policy.getDeadLetterTopic());
        return differences;
    }

    /**
     * Counts {@link #differences} of {@code subscription}'s live consumer, if it has one now, for
     * {@code settle_config_differences}; logs each difference once, the first time it is seen.
     */
    static IntSupplier watch(SubscriptionSpec spec, Supplier<Optional<Consumer<?>>> consumer) {
        Set<String> logged = ConcurrentHashMap.newKeySet();
        return () -> {
            List<Difference> differences =
                    consumer.get().map(live -> differences(spec, live)).orElse(List.of());
            for (Difference difference : differences) {
                if (logged.add(difference.toString())) {
                    log.warn(
                            "subscription '{}': its consumer runs with settings its manifest does not say: {}"
                                    + " (GET /config/effective on the admin port lists the settings in force)",
                            spec.name(),
                            difference);
                }
            }
            return differences.size();
        };
    }

    private static void compare(List<Difference> differences, String setting, Object manifest, Object inForce) {
        // Numbers compared by value: an int in the manifest, a long in the client.
        boolean same = manifest instanceof Number a && inForce instanceof Number b
                ? a.longValue() == b.longValue()
                : Objects.equals(manifest, inForce);
        if (!same) {
            differences.add(new Difference(setting, manifest, inForce));
        }
    }

    private static Map<String, Object> json(Difference difference) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("setting", difference.setting());
        out.put("manifest", difference.manifest() instanceof Collection<?> c ? List.copyOf(c) : difference.manifest());
        out.put("inForce", difference.inForce() instanceof Collection<?> c ? List.copyOf(c) : difference.inForce());
        return out;
    }
}
