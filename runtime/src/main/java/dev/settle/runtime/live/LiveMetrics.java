package dev.settle.runtime.live;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.IntSupplier;

/**
 * {@code settle_handler_info} (1 for each subscription's running generation), {@code settle_swaps_total} and
 * {@code settle_handler_classloaders_live}. The info series of a retired generation is removed, so the labels stay
 * bounded by the subscriptions.
 */
final class LiveMetrics {
    private final Gauge info;
    private final Counter swaps;

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

    void refused(String subscription) {
        swaps.labelValues(subscription, "refused").inc();
    }

    private static String[] labels(String subscription, GenerationRecord generation) {
        return new String[] {
            subscription, Integer.toString(generation.number()), generation.sha256(), generation.handler()
        };
    }
}
