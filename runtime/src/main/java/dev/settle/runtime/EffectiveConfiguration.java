package dev.settle.runtime;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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

/**
 * {@code GET /config/effective} on the admin port (docs/observability.md): what the live client, each subscription's
 * consumer and its producers run with, read from the client's own objects ({@code ConsumerBase#getConf},
 * {@code ProducerBase#getConfiguration}, {@code PulsarClientImpl#getConfiguration}), not from the manifest, in the
 * client's own names. Only settings are picked, one by one: the authentication's class but never its parameters,
 * tokens or passwords, and no TLS key material.
 */
final class EffectiveConfiguration {
    private EffectiveConfiguration() {}

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
}
