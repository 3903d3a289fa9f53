package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * One key of the manifest, declared once in {@link ManifestKeys}: where it is, what it holds, its default, its bounds
 * or allowed values, a line of documentation, since when it exists and whether its meaning changed, and what a reload
 * does when it changes. The readers validate from it; {@code ManifestKeysAgreementTest} holds the JSON schema and
 * {@code docs/manifest.md} to it.
 *
 * @param level the mapping the key is written in
 * @param defaultValue the default as a manifest would write it ({@code 60s}, {@code Shared}); empty when the default
 *     is no value, or is computed (then {@code computedDefault} says what it is)
 * @param computedDefault a default that is not one written value, as the docs say it ({@code `<name>-dlq`})
 * @param min the smallest value accepted, with the problem that says so, where the type has more than its own bounds
 * @param max the largest value accepted, likewise
 * @param allowed the values of an {@link ValueType#ENUM}, spelled exactly
 * @param since the version that first read the key
 * @param changes each version that changed what the key means, in order; a manifest written before one means
 *     something else by it
 */
record ManifestKey(
        Level level,
        String name,
        ValueType type,
        boolean required,
        Optional<String> defaultValue,
        Optional<String> computedDefault,
        Optional<Bound> min,
        Optional<Bound> max,
        List<String> allowed,
        String doc,
        String since,
        List<MeaningChange> changes,
        Reload reload) {

    /** The mappings keys are written in, with the path a problem names them by. */
    enum Level {
        ROOT(""),
        PULSAR("pulsar"),
        AUTHENTICATION("pulsar.authentication"),
        PULSAR_TOKEN("pulsar.authentication.token"),
        OAUTH2("pulsar.authentication.oauth2"),
        CLIENT_CERTIFICATE("pulsar.authentication.tls"),
        TLS("pulsar.tls"),
        HTTP("http"),
        STARTUP("startup"),
        SHUTDOWN("shutdown"),
        ADMIN("admin"),
        ADMIN_TOKEN("admin.token"),
        SUBSCRIPTION("subscriptions[]"),
        FAILURE_BACKOFF("subscriptions[].failureBackoff"),
        OUTPUT("subscriptions[].output"),
        COMMIT_BATCH("subscriptions[].commitBatch"),
        BREAKER("subscriptions[].breaker"),
        BATCH("subscriptions[].batch"),
        WINDOW("subscriptions[].windowConfig"),
        EXCEPTION_RULE("subscriptions[].onException[]");

        private final String path;

        Level(String path) {
            this.path = path;
        }

        String path() {
            return path;
        }

        /** The keys written here, in the order problems list them. */
        List<String> names() {
            return ManifestKeys.at(this).stream().map(ManifestKey::name).toList();
        }

        /** The keys that must be written here. */
        List<String> required() {
            return ManifestKeys.at(this).stream()
                    .filter(ManifestKey::required)
                    .map(ManifestKey::name)
                    .toList();
        }
    }

    /** What a key holds, as the reader reads it. */
    enum ValueType {
        STRING,
        /** A path, relative to the manifest's folder. */
        PATH,
        CLASS_NAME,
        TOPIC,
        TOPICS,
        INTEGER,
        /** A decimal number. */
        NUMBER,
        BOOLEAN,
        DURATION,
        /** A duration that may be {@code 0ms}. */
        DURATION_OR_ZERO,
        /** Bytes, or a number with KiB, MiB or GiB; between 1 KiB and 2 GiB. */
        SIZE,
        /** One of {@link ManifestKey#allowed()}. */
        ENUM,
        MAPPING,
        LIST,
        /** {@code {env: NAME}} or {@code {file: path}}: a secret is never written in the manifest. */
        SECRET_SOURCE,
        /** A mapping, or the word {@code none}. */
        MAPPING_OR_NONE,
        TOPIC_OR_MAPPING,
        BOOLEAN_OR_TOPIC,
        STRING_OR_MAPPING,
        /** A key Settle knows and refuses, saying why ({@link ManifestKey#doc()}): not in the schema nor the docs. */
        REFUSED
    }

    /** What a reload does when the key's value changes (docs/live-code.md, "Manifest reload"). */
    enum Reload {
        /** The reload is refused as a whole: the section needs a restart of settle. */
        REFUSED,
        /** The subscription is drained, stopped and started again with the new settings. */
        RESTARTS_SUBSCRIPTION,
        /**
         * Applied live: the subscription's code is swapped with its consumer open (a Pulsar Function, and with
         * {@code admin:} on a change of code and consumer at once, restart instead).
         */
        SWAPS_CODE,
        /** A new name is a new subscription: the old one is stopped, the new one started. */
        REPLACES_SUBSCRIPTION,
        /** Each entry as its own keys say; an entry added is started, one removed is stopped. */
        PER_ENTRY
    }

    /**
     * A bound and the problem a value past it gets, a format whose {@code %s} is the value as the manifest would
     * write it.
     */
    record Bound(String limit, String problem) {}

    /** A version that changed what the key means, and how. */
    record MeaningChange(String version, String what) {}

    ManifestKey {
        allowed = List.copyOf(allowed);
        changes = List.copyOf(changes);
    }

    /** The path a problem names the key by, with {@code []} for any index. */
    String path() {
        return level.path().isEmpty() ? name : level.path() + "." + name;
    }

    int intDefault() {
        return Integer.parseInt(defaultValue.orElseThrow());
    }

    boolean booleanDefault() {
        return Boolean.parseBoolean(defaultValue.orElseThrow());
    }

    Duration durationDefault() {
        return type == ValueType.DURATION_OR_ZERO
                ? DurationText.parseZeroOrMore(defaultValue.orElseThrow())
                : DurationText.parse(defaultValue.orElseThrow());
    }

    String textDefault() {
        return defaultValue.orElseThrow();
    }
}
