package dev.settle.runtime;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.function.FunctionPort;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.live.CurrentGeneration;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.publish.PulsarOutputs;
import dev.settle.runtime.time.Time;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.PulsarClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a subscription's code through the {@link PortChain} into a {@link RunningSubscription}, not started yet: at
 * start and when a reload adds or restarts a subscription. A handler runs as its subscription's
 * {@link CurrentGeneration} (the live code's, with the admin API); a function behind its port.
 *
 * <p>Used under the monitor of the {@link Subscriptions} it opens for.
 */
final class SubscriptionOpener {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionOpener.class);

    private final Supplier<PulsarClient> client;
    private final SettleMetrics metrics;
    private final Time time;
    /** With the admin API, once restored; null otherwise. */
    private LiveCode live;

    /** @param client the Pulsar client; null until it is created, which publishers ask for at their first message */
    SubscriptionOpener(Supplier<PulsarClient> client, SettleMetrics metrics, Time time) {
        this.client = client;
        this.metrics = metrics;
        this.time = time;
    }

    void live(LiveCode restored) {
        live = restored;
    }

    /** New outputs for a subscription's code to publish to. */
    PulsarOutputs outputs(SubscriptionSpec spec) {
        return new PulsarOutputs(
                client,
                "subscription '" + spec.name() + "'",
                RunningSubscription.producerSettings(spec),
                spec.guarantee() == Guarantee.EXACTLY_ONCE,
                time);
    }

    /** Opens a subscription of {@code from}: its handler with new outputs, or its function (the client exists). */
    RunningSubscription open(Deployment from, SubscriptionSpec spec) throws HandlerLoadException {
        return from.function(spec.name()).isEmpty() ? handler(from, spec, outputs(spec)) : function(from, spec);
    }

    /**
     * Opens a subscription's handler, publishing to {@code outputs} (closed again if it fails), unless the live code
     * restored an upload to run instead.
     */
    RunningSubscription handler(Deployment from, SubscriptionSpec spec, PulsarOutputs outputs)
            throws HandlerLoadException {
        LoadedHandler handler = from.handler(spec.name());
        if (live != null && live.runsUpload(spec.name())) {
            return RunningSubscription.handler(spec, live.code(spec.name(), null, null), outputs);
        }
        HandlerPort port;
        try {
            port = PortChain.handler(handler, spec, outputs, time, metrics.forSubscription(spec.name()));
        } catch (HandlerLoadException | RuntimeException e) {
            outputs.close();
            throw e;
        }
        log.info(
                "subscription '{}': handler {} {} loaded from {} (message type {})",
                spec.name(),
                handler.className(),
                handler.version().orElse("(no version)"),
                handler.jar(),
                handler.messageType().getName());
        CurrentGeneration code = live != null
                ? live.code(spec.name(), handler, port)
                : CurrentGeneration.ofManifest(handler, port, () -> from.release(spec.name()), time.instant());
        return RunningSubscription.handler(spec, code, outputs);
    }

    /** Initialises a subscription's Pulsar Function with outputs of its own: {@code initialize} may publish. */
    RunningSubscription function(Deployment from, SubscriptionSpec spec) throws HandlerLoadException {
        LoadedFunction function = from.function(spec.name()).orElseThrow();
        PulsarOutputs outputs = outputs(spec);
        FunctionPort port;
        try {
            port = PortChain.function(
                    function,
                    spec,
                    outputs,
                    new FunctionPort.Surroundings(
                            (name, value) -> metrics.functionMetric(spec.name(), name, value),
                            System::getenv,
                            // Its log lines carry its class name, as under Pulsar Functions, in the runtime's format.
                            LoggerFactory.getLogger(function.className()),
                            FunctionPort.StateReader.of(client),
                            time));
        } catch (HandlerLoadException | RuntimeException e) {
            outputs.close();
            throw e;
        }
        // The output producer now, not at the first message: a topic that cannot be written keeps the
        // subscription unready (the driver waits for it) instead of failing every message.
        spec.function()
                .output()
                .ifPresent(topic -> port.outputSchema().ifPresent(schema -> outputs.prepare(topic, schema)));
        log.info(
                "subscription '{}': function {} {} loaded from {} ({} to {}{})",
                spec.name(),
                function.className(),
                function.version().orElse("(no version)"),
                function.jar(),
                function.inputType().getName(),
                function.outputType().getName(),
                spec.function().output().map(topic -> ", published to " + topic).orElse(", no output"));
        return RunningSubscription.function(
                spec, new RunningSubscription.FunctionParts(port, () -> from.release(spec.name())), outputs);
    }
}
