package dev.settle.runtime.manifest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The keys a manifest writes whose meaning changed in some version ({@link ManifestKey#changes()}), each a line that
 * says where, since when and how, so that a manifest written for an older Settle is told what now reads differently
 * (an upgrade's {@code handlerTimeout}, for one). Nothing here refuses: the manifest is valid, and its author decides.
 */
public final class ChangedMeanings {
    private ChangedMeanings() {}

    /** One line per key written in {@code manifest} whose meaning changed, in file order; none today. */
    public static List<String> of(Manifest manifest) {
        return of(manifest, ManifestKeys.all());
    }

    static List<String> of(Manifest manifest, List<ManifestKey> table) {
        List<String> lines = new ArrayList<>();
        manifest.locations().entrySet().stream()
                .sorted(Map.Entry.comparingByValue(
                        (a, b) -> a.line() != b.line() ? Integer.compare(a.line(), b.line()) : a.column() - b.column()))
                .forEach(written -> {
                    // subscriptions[2].handlerTimeout is the row subscriptions[].handlerTimeout
                    String row = written.getKey().replaceAll("\\[\\d+]", "[]");
                    for (ManifestKey key : table) {
                        if (key.path().equals(row)) {
                            for (ManifestKey.MeaningChange change : key.changes()) {
                                lines.add(written.getValue() + ": " + written.getKey() + ": its meaning changed in "
                                        + change.version() + ": " + change.what());
                            }
                        }
                    }
                });
        return lines;
    }
}
