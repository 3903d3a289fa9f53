package dev.settle.runtime.observe;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** The Prometheus text exposition of a registry, as Prometheus scrapes it, read back into samples. */
public final class Exposition {
    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    final String text;
    /** Sample name and labels (sorted by label name) to value, such as {@code x_total{a="1",b="2"}}. */
    private final Map<String, Double> samples = new TreeMap<>();

    private Exposition(String text) {
        this.text = text;
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Matcher sample = SAMPLE.matcher(line);
            if (!sample.matches()) {
                throw new AssertionError("not a sample line: " + line);
            }
            samples.put(key(sample.group(1), sample.group(2)), Double.parseDouble(sample.group(3)));
        }
    }

    public static Exposition of(PrometheusRegistry registry) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Exposition(out.toString(StandardCharsets.UTF_8));
    }

    /** A runtime's exposition as its {@code /metrics} served it. */
    public static Exposition parse(String text) {
        return new Exposition(text);
    }

    /** The value of a sample written as in the exposition, labels in any order; null when absent. */
    public Double value(String sample) {
        Matcher matcher = SAMPLE.matcher(sample + " 0");
        if (!matcher.matches()) {
            throw new IllegalArgumentException(sample);
        }
        return samples.get(key(matcher.group(1), matcher.group(2)));
    }

    /** Every sample name, such as {@code settle_handler_duration_seconds_bucket}. */
    Set<String> sampleNames() {
        return samples.keySet().stream()
                .map(key -> key.replaceFirst("\\{.*", ""))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** The samples whose name is {@code name}, keyed as by {@link #value}. */
    Map<String, Double> samplesNamed(String name) {
        return samples.entrySet().stream()
                .filter(e -> e.getKey().equals(name) || e.getKey().startsWith(name + "{"))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new));
    }

    private static String key(String name, String labels) {
        if (labels == null || labels.isEmpty()) {
            return name;
        }
        Map<String, String> sorted = new TreeMap<>();
        Matcher label = LABEL.matcher(labels);
        while (label.find()) {
            // An empty value is no label, as Prometheus reads it (settle_outcomes_total's generation without a ramp).
            if (!label.group(2).isEmpty()) {
                sorted.put(label.group(1), label.group(2));
            }
        }
        return name
                + sorted.entrySet().stream()
                        .map(e -> e.getKey() + "=\"" + e.getValue() + "\"")
                        .collect(Collectors.joining(",", "{", "}"));
    }
}
