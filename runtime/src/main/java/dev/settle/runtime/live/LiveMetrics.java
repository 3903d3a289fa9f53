package dev.settle.runtime.live;

import dev.settle.runtime.canary.Outcomes;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * {@code settle_handler_info} (1 for each subscription's running generation), {@code settle_swaps_total} and
 * {@code settle_handler_classloaders_live}. The info series of a retired generation is removed, so the labels stay
 * bounded by the subscriptions.
 */
final class LiveMetrics {
    private final Gauge info;
    private final Counter swaps;
    private final Gauge rampPercent;
    private final Counter rampEnds;
    /** Each subscription's ramp, read when the metrics are scraped. */
    private final Map<String, Supplier<Optional<RampStatus>>> ramps = new ConcurrentHashMap<>();

    LiveMetrics(PrometheusRegistry registry, IntSupplier loadersAlive) {
        info = Gauge.builder()
                .name("settle_handler_info")
                .help("The running generation of each subscription's handler code: 1.")
                .labelNames("subscription", "generation", "sha256", "handler")
                .withoutExemplars()
                .register(registry);
        swaps = Counter.builder()
                .name("settle_swaps")
                .help("Handler swaps asked for through the admin API, by result: deployed, rolled_back, refused.")
                .labelNames("subscription", "result")
                .withoutExemplars()
                .register(registry);
        rampPercent = Gauge.builder()
                .name("settle_canary_percent")
                .help("The slice of keys (percent) a running canary ramp's generation serves; no series without one.")
                .labelNames("subscription", "generation")
                .withoutExemplars()
                .register(registry);
        rampEnds = Counter.builder()
                .name("settle_canary_ramps_ended")
                .help("Canary ramps ended on this runtime, by result: promoted, rolled_back, aborted.")
                .labelNames("subscription", "result")
                .withoutExemplars()
                .register(registry);
        GaugeWithCallback.builder()
                .name("settle_generation_calls")
                .help("While a canary ramp runs: each generation's calls in the ramp's current step, by outcome"
                        + " (ack, failure, retry, retry_after, none, drop); no series without a ramp.")
                .labelNames("subscription", "generation", "outcome")
                .callback(callback -> ramps.forEach((subscription, status) -> status.get()
                        .filter(r -> r.ramp().running())
                        .ifPresent(r -> {
                            outcomes(callback, subscription, r.ramp().generation(), r.canary());
                            outcomes(callback, subscription, r.currentGeneration(), r.current());
                        })))
                .register(registry);
        GaugeWithCallback.builder()
                .name("settle_handler_classloaders_live")
                .help("Handler class loaders not yet garbage collected: the running generations' and retired ones"
                        + " something still holds.")
                .callback(callback -> callback.call(loadersAlive.getAsInt()))
                .register(registry);
    }

    void active(String subscription, GenerationRecord generation) {
        info.labelValues(labels(subscription, generation)).set(1);
        for (String result : new String[] {"deployed", "rolled_back", "refused"}) {
            swaps.labelValues(subscription, result);
        }
    }

    void swapped(String subscription, GenerationRecord retired, GenerationRecord next, String result) {
        info.remove(labels(subscription, retired));
        info.labelValues(labels(subscription, next)).set(1);
        swaps.labelValues(subscription, result).inc();
    }

    private static void outcomes(
            GaugeWithCallback.Callback callback, String subscription, int generation, Outcomes.Snapshot counts) {
        String number = Integer.toString(generation);
        long others = counts.failures() + counts.retries() + counts.retryAfters() + counts.nones() + counts.drops();
        callback.call(counts.calls() - others, subscription, number, "ack");
        callback.call(counts.failures(), subscription, number, "failure");
        callback.call(counts.retries(), subscription, number, "retry");
        callback.call(counts.retryAfters(), subscription, number, "retry_after");
        callback.call(counts.nones(), subscription, number, "none");
        callback.call(counts.drops(), subscription, number, "drop");
    }

    void watchRamp(String subscription, Supplier<Optional<RampStatus>> status) {
        ramps.put(subscription, status);
    }

    /** A ramp started or stepped: its slice. */
    void ramp(String subscription, Ramp ramp) {
        rampPercent
                .labelValues(subscription, Integer.toString(ramp.generation()))
                .set(ramp.percent());
        for (String result : new String[] {"promoted", "rolled_back", "aborted"}) {
            rampEnds.labelValues(subscription, result);
        }
    }

    void rampEnded(String subscription, Ramp ramp) {
        rampPercent.remove(subscription, Integer.toString(ramp.generation()));
        rampEnds.labelValues(subscription, ramp.status().name().toLowerCase(Locale.ROOT))
                .inc();
    }

    void refused(String subscription) {
        swaps.labelValues(subscription, "refused").inc();
    }

    private static String[] labels(String subscription, GenerationRecord generation) {
        return new String[] {
            subscription, Integer.toString(generation.number()), generation.sha256(), generation.handler()
        };
    }
}
