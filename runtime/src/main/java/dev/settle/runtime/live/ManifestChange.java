package dev.settle.runtime.live;

import dev.settle.runtime.manifest.HandlerSource;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a reloaded manifest changes against the running one (docs/live-code.md, "Manifest reload"): per
 * subscription, whether it is added, removed, its code swapped, its consumer restarted, or left alone; and which
 * sections outside the subscriptions differ (those need a restart of the process).
 *
 * @param subscriptions every subscription of either manifest, the running ones first, in manifest order
 * @param sectionsChanged the top-level sections other than {@code subscriptions} that differ, such as
 *     {@code pulsar}
 * @param codeChanged the subscriptions kept in both whose code differs (swapped, or restarted with new code)
 */
public record ManifestChange(
        Map<String, Kind> subscriptions, List<String> sectionsChanged, java.util.Set<String> codeChanged) {
    /** What a reload does to one subscription. */
    public enum Kind {
        /** Nothing differs, the JAR's bytes included: not touched at all. */
        UNCHANGED,
        /** Only in the new manifest: started. */
        ADDED,
        /** Only in the running one: drained and stopped. */
        REMOVED,
        /**
         * Only its code differs (handler class, JAR path or bytes, package version, config): swapped, the consumer
         * kept open.
         */
        SWAP,
        /**
         * A setting of the consumer or the driver differs: drained, stopped and started again. Among them
         * {@code guarantee} and {@code commitBatch}: the output producers and the driver's commit stage, which groups
         * deliveries into transactions by {@code commitBatch}, are made when the subscription starts.
         */
        RESTART
    }

    public ManifestChange {
        subscriptions = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(subscriptions));
        sectionsChanged = List.copyOf(sectionsChanged);
        codeChanged = java.util.Set.copyOf(codeChanged);
    }

    /**
     * Compares two manifests.
     *
     * @param runningSha256 the sha256 of each running subscription's JAR as it was loaded
     * @param nextSha256 the sha256 of each subscription's JAR in the new manifest, as it is now
     */
    public static ManifestChange between(
            Manifest running, Map<String, String> runningSha256, Manifest next, Map<String, String> nextSha256) {
        List<String> sections = new ArrayList<>();
        if (!running.pulsar().equals(next.pulsar())) {
            sections.add("pulsar");
        }
        if (!running.http().equals(next.http())) {
            sections.add("http");
        }
        if (!running.startup().equals(next.startup())) {
            sections.add("startup");
        }
        if (!running.shutdown().equals(next.shutdown())) {
            sections.add("shutdown");
        }
        if (running.tracing() != next.tracing()) {
            sections.add("tracing");
        }
        if (!running.admin().equals(next.admin())) {
            sections.add("admin");
        }
        Map<String, SubscriptionSpec> after = new LinkedHashMap<>();
        next.subscriptions().forEach(spec -> after.put(spec.name(), spec));
        Map<String, Kind> kinds = new LinkedHashMap<>();
        java.util.Set<String> code = new java.util.HashSet<>();
        for (SubscriptionSpec before : running.subscriptions()) {
            SubscriptionSpec now = after.get(before.name());
            if (now != null && !sameCode(before, runningSha256.get(before.name()), now, nextSha256.get(now.name()))) {
                code.add(now.name());
            }
            kinds.put(
                    before.name(),
                    now == null
                            ? Kind.REMOVED
                            : kind(before, runningSha256.get(before.name()), now, nextSha256.get(before.name())));
        }
        for (SubscriptionSpec spec : next.subscriptions()) {
            kinds.putIfAbsent(spec.name(), Kind.ADDED);
        }
        return new ManifestChange(kinds, sections, code);
    }

    private static Kind kind(SubscriptionSpec before, String beforeSha, SubscriptionSpec now, String nowSha) {
        if (sameCode(before, beforeSha, now, nowSha) && before.equals(now)) {
            return Kind.UNCHANGED;
        }
        // The same subscription with the code's parts taken from the new one: equal when nothing else changed.
        HandlerSource code = new HandlerSource(
                now.handler().className(),
                now.handler().jar(),
                before.handler().schema(),
                before.handler().function(),
                now.handler().fromPackage());
        SubscriptionSpec onlyCode =
                before.toBuilder().handler(code).config(now.config()).build();
        // A Pulsar Function is initialised with its consumer's settings: any change of it is a restart.
        return onlyCode.equals(now) && !before.handler().function() ? Kind.SWAP : Kind.RESTART;
    }

    private static boolean sameCode(SubscriptionSpec before, String beforeSha, SubscriptionSpec now, String nowSha) {
        return before.handler().className().equals(now.handler().className())
                && before.handler().jar().equals(now.handler().jar())
                && before.handler().fromPackage().equals(now.handler().fromPackage())
                && Objects.equals(beforeSha, nowSha)
                && before.config().equals(now.config());
    }

    /** The subscriptions of one kind, in order. */
    public List<String> of(Kind kind) {
        return subscriptions.entrySet().stream()
                .filter(entry -> entry.getValue() == kind)
                .map(Map.Entry::getKey)
                .toList();
    }

    /** Whether the reload would change nothing at all. */
    public boolean isEmpty() {
        return sectionsChanged.isEmpty() && of(Kind.UNCHANGED).size() == subscriptions.size();
    }

    @Override
    public String toString() {
        List<String> parts = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            List<String> names = of(kind);
            if (!names.isEmpty()) {
                parts.add(kind.name().toLowerCase(java.util.Locale.ROOT) + ": " + String.join(", ", names));
            }
        }
        return String.join("; ", parts);
    }
}
