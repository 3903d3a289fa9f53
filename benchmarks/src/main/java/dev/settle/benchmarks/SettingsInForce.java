package dev.settle.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.impl.ConsumerBase;
import org.apache.pulsar.client.impl.conf.ConsumerConfigurationData;

/**
 * The consumer settings a contender runs with, in the Pulsar client's own names, as the table prints them under
 * itself (issue 51: a goal missed is explained by the settings in force, not guessed at). Read from the live consumer:
 * the loops print theirs on a {@code SETTINGS} line of their output ({@link #line}), Settle answers them at
 * {@code /config/effective} ({@link #fromEffective}).
 */
final class SettingsInForce {
    /** The prefix of the line a loop prints them on. */
    static final String PREFIX = "SETTINGS ";

    /** The settings printed, in this order: those that decide what a consumer asks of the broker per message. */
    static final List<String> NAMES = List.of(
            "subscriptionType",
            "receiverQueueSize",
            "acknowledgementsGroupTimeMicros",
            "batchIndexAckEnabled",
            "ackTimeoutMillis",
            "negativeAckRedeliveryDelayMicros",
            "ackReceiptEnabled",
            "poolMessages");

    private SettingsInForce() {}

    /** The settings of {@code consumer}, a consumer of this JVM's client, read from its configuration. */
    static Map<String, String> of(Consumer<?> consumer) {
        ConsumerConfigurationData<?> conf = ((ConsumerBase<?>) consumer).getConf();
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("subscriptionType", conf.getSubscriptionType().name());
        settings.put("receiverQueueSize", String.valueOf(conf.getReceiverQueueSize()));
        settings.put("acknowledgementsGroupTimeMicros", String.valueOf(conf.getAcknowledgementsGroupTimeMicros()));
        settings.put("batchIndexAckEnabled", String.valueOf(conf.isBatchIndexAckEnabled()));
        settings.put("ackTimeoutMillis", String.valueOf(conf.getAckTimeoutMillis()));
        settings.put("negativeAckRedeliveryDelayMicros", String.valueOf(conf.getNegativeAckRedeliveryDelayMicros()));
        settings.put("ackReceiptEnabled", String.valueOf(conf.isAckReceiptEnabled()));
        settings.put("poolMessages", String.valueOf(conf.isPoolMessages()));
        return settings;
    }

    /** {@code settings} as the line a loop prints: {@code SETTINGS name=value name=value...}. */
    static String line(Map<String, String> settings) {
        return PREFIX
                + settings.entrySet().stream()
                        .map(setting -> setting.getKey() + "=" + setting.getValue())
                        .collect(Collectors.joining(" "));
    }

    /** The settings of a {@link #line}. */
    static Map<String, String> fromLine(String line) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String pair : line.substring(PREFIX.length()).trim().split(" ")) {
            int equals = pair.indexOf('=');
            if (equals > 0) {
                settings.put(pair.substring(0, equals), pair.substring(equals + 1));
            }
        }
        return settings;
    }

    /**
     * The {@link #NAMES} of the first subscription's consumer in Settle's {@code /config/effective} answer (JSON); a
     * name it does not give is left out.
     */
    static Map<String, String> fromEffective(String json) {
        int consumer = json.indexOf("\"consumer\":{");
        if (consumer < 0) {
            throw new IllegalArgumentException("no consumer in Settle's /config/effective answer: " + json);
        }
        String rest = json.substring(consumer);
        Map<String, String> settings = new LinkedHashMap<>();
        for (String name : NAMES) {
            Matcher value =
                    Pattern.compile("\"" + name + "\":(\"([^\"]*)\"|[^,}\\]]+)").matcher(rest);
            if (value.find()) {
                settings.put(name, value.group(2) != null ? value.group(2) : value.group(1));
            }
        }
        return settings;
    }

    /** {@code settings} for a note under the table: {@code name value, name value...}. */
    static String describe(Map<String, String> settings) {
        return settings.entrySet().stream()
                .map(setting -> setting.getKey() + " " + setting.getValue())
                .collect(Collectors.joining(", "));
    }
}
