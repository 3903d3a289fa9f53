package dev.settle.test;

import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a Pulsar Function's {@code Context} served and recorded on the kit: the lines it logged through
 * {@code getLogger()}, the user config it was given, what it published, and what it passed to
 * {@code recordMetric}. The context is the runtime's own; only where its lines, sends and metrics go differs.
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API").
 */
public final class FunctionRecording {
    private final SubscriptionSpec spec;
    private final RecordingLogger logger;
    private final SettleTestDriver owner;
    private final Map<String, List<Double>> metrics = new LinkedHashMap<>();

    FunctionRecording(SubscriptionSpec spec, RecordingLogger logger, SettleTestDriver owner) {
        this.spec = spec;
        this.logger = logger;
        this.owner = owner;
    }

    /** Every line the function logged, in order, as {@code "INFO text"} (the level, a space, the formatted text). */
    public List<String> logged() {
        return logger.lines();
    }

    /** What {@code getUserConfigMap()} answers: the subscription's {@code config}. */
    public Map<String, Object> userConfig() {
        return Map.copyOf(spec.config());
    }

    /** Everything the function published (return values and {@code context.publish}), in order. */
    public List<Published> published() {
        return owner.outputsOf(spec.name());
    }

    /** Each name given to {@code recordMetric}, with its values in order. */
    public synchronized Map<String, List<Double>> metrics() {
        Map<String, List<Double>> copy = new LinkedHashMap<>();
        metrics.forEach((name, values) -> copy.put(name, List.copyOf(values)));
        return copy;
    }

    synchronized void recordMetric(String name, double value) {
        metrics.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
    }
}
