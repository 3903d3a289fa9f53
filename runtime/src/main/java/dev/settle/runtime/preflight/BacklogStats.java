package dev.settle.runtime.preflight;

import dev.settle.runtime.manifest.PulsarSettings;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A subscription's backlog and the publish time of its oldest unsettled message, from the broker's topic stats
 * ({@code GET .../stats?getEarliestTimeInBacklog=true}, or {@code partitioned-stats} for a partitioned topic), summed
 * over its topics: what the drain-time metrics divide and age (docs/scaling.md). Asked through the admin API at
 * {@code pulsar.adminUrl}, as the preflight asks it.
 */
public final class BacklogStats {
    private final BrokerRest rest;

    private BacklogStats(BrokerRest rest) {
        this.rest = rest;
    }

    /** Empty without {@code pulsar.adminUrl}. */
    public static Optional<BacklogStats> of(PulsarSettings pulsar) throws IOException {
        return BrokerRest.of(pulsar).map(BacklogStats::new);
    }

    /**
     * One reading.
     *
     * @param backlog messages not yet settled, over every topic
     * @param oldestPublishMillis the earliest publish time among them (epoch millis), 0 when none is known
     */
    public record Backlog(long backlog, long oldestPublishMillis) {}

    /** The subscription's backlog over {@code topics}; empty when a topic's stats cannot be read (the reason logged by the caller). */
    public Backlog read(String subscription, List<String> topics) throws IOException {
        rest.forgetUnreachable();
        long backlog = 0;
        long oldest = 0;
        for (String topic : topics) {
            String path = AdminPaths.topicPath(topic);
            BrokerRest.Answer stats = rest.get(path + "/stats?getEarliestTimeInBacklog=true");
            if (stats.status() == 404) {
                stats = rest.get(path + "/partitioned-stats?getEarliestTimeInBacklog=true");
            }
            if (!stats.ok()) {
                throw new IOException(stats.describe());
            }
            if (stats.json() instanceof Map<?, ?> all
                    && all.get("subscriptions") instanceof Map<?, ?> subscriptions
                    && subscriptions.get(subscription) instanceof Map<?, ?> one) {
                if (one.get("msgBacklog") instanceof Number count) {
                    backlog += count.longValue();
                }
                if (one.get("earliestMsgPublishTimeInBacklog") instanceof Number earliest && earliest.longValue() > 0) {
                    oldest = oldest == 0 ? earliest.longValue() : Math.min(oldest, earliest.longValue());
                }
            }
        }
        return new Backlog(backlog, oldest);
    }
}
