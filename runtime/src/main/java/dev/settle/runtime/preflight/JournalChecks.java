package dev.settle.runtime.preflight;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * The settlement journal's topic (docs/trace.md): that it keeps its records as long as {@code settle trace} looks
 * for them. Nobody subscribes to a journal topic ({@code settle trace} reads it with readers), so the broker keeps a
 * record only as long as the topic's retention says: none, and a story is gone once its ledger rolls over.
 */
final class JournalChecks {
    /** How far back {@code settle trace} reads by default ({@code --since 24h}): what the journal promises to tell. */
    static final Duration TRACED = Duration.ofHours(24);

    private final Optional<BrokerRest> rest;
    private final BrokerSettings settings;

    JournalChecks(Optional<BrokerRest> rest, BrokerSettings settings) {
        this.rest = rest;
        this.settings = settings;
    }

    /** A warning when the retention in force on {@code topic} keeps its records less than {@link #TRACED}. */
    Check retention(String name, String topic) {
        if (rest.isEmpty()) {
            return Check.couldNotCheck(
                    name,
                    "journal-retention",
                    topic + " was not checked: " + BrokerPreflight.NO_ADMIN_URL
                            + " (preflight asks the broker's admin API)");
        }
        Retention found;
        try {
            found = inForce(topic);
        } catch (IOException | RuntimeException e) {
            return Check.couldNotCheck(
                    name, "journal-retention", "the retention of " + topic + " could not be read: " + e.getMessage());
        }
        if (found == null) {
            return Check.couldNotCheck(
                    name,
                    "journal-retention",
                    "the retention of " + topic + " could not be read: neither the topic, its namespace nor the"
                            + " broker's settings (defaultRetentionTimeInMinutes) answered");
        }
        String setIt = ": settle trace reads " + TRACED.toHours() + " h back by default, so set at least that, as"
                + " pulsar-admin namespaces set-retention " + AdminPaths.namespace(topic) + " --time "
                + TRACED.toHours() + "h --size 1G (or topics set-retention " + topic + ")";
        if (found.minutes() == 0 || found.megabytes() == 0) {
            return Check.failed(
                    name, "journal-retention", false, topic + " keeps no record once written (" + found + ")" + setIt);
        }
        if (found.minutes() > 0 && found.minutes() < TRACED.toMinutes()) {
            return Check.failed(
                    name,
                    "journal-retention",
                    false,
                    topic + " keeps its records " + found.minutes() + " min (" + found + "), less than the story"
                            + " settle trace tells" + setIt);
        }
        return Check.ok(name, "journal-retention", topic + " keeps its records " + found);
    }

    /**
     * A retention: minutes and megabytes, -1 for no limit; the broker drops a record past either (0 keeps none).
     *
     * @param source where it was set: the topic, its namespace, or the broker's default
     */
    private record Retention(long minutes, long megabytes, String source) {
        @Override
        public String toString() {
            return (minutes < 0 ? "for ever" : minutes + " min") + " up to "
                    + (megabytes < 0 ? "any size" : megabytes + " MB") + ", " + source;
        }
    }

    /** The topic's own, else its namespace's, else the broker's default; null when none can be read. */
    private Retention inForce(String topic) throws IOException {
        BrokerRest.Answer own = rest.get().get(AdminPaths.topicPath(topic) + "/retention");
        Retention found = own.ok() ? of(own.json(), "the topic's retention") : null;
        if (found != null) {
            return found;
        }
        BrokerRest.Answer namespace = rest.get().get(AdminPaths.namespacePath(topic) + "/retention");
        found = namespace.ok() ? of(namespace.json(), "the namespace's retention") : null;
        if (found != null) {
            return found;
        }
        Optional<Long> minutes = number(settings.read("defaultRetentionTimeInMinutes"));
        Optional<Long> megabytes = number(settings.read("defaultRetentionSizeInMB"));
        if (minutes.isEmpty() || megabytes.isEmpty()) {
            return null;
        }
        return new Retention(
                minutes.get(),
                megabytes.get(),
                "the broker's defaultRetentionTimeInMinutes and defaultRetentionSizeInMB (none set on the namespace)");
    }

    private static Retention of(Object json, String source) {
        if (json instanceof Map<?, ?> map
                && map.get("retentionTimeInMinutes") instanceof Number minutes
                && map.get("retentionSizeInMB") instanceof Number megabytes) {
            return new Retention(minutes.longValue(), megabytes.longValue(), source);
        }
        // No policy of this level: an empty answer.
        return null;
    }

    private static Optional<Long> number(BrokerSettings.Reading reading) {
        try {
            return reading.value().map(String::strip).map(Long::parseLong);
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }
}
