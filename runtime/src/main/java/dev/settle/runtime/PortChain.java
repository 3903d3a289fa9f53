package dev.settle.runtime;

import dev.settle.runtime.driver.DriverMetrics;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SdkBatchPort;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.function.FunctionPort;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.Handler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a subscription's code is opened behind the driver's port, for {@link Settle} and the test kit's
 * {@code SettleTestDriver} alike, so the kit runs what {@code settle run} runs: a handler is opened with its
 * subscription's context, publishing to its outputs, behind an {@link SdkHandlerPort}; a Pulsar Function is
 * initialised behind a {@link FunctionPort}. The driver's {@code Processing} adds the rest of the chain (the duplicate
 * guard, the exception rules, the settlement) for both.
 *
 * <p>Public for the test kit, not supported API.
 */
public final class PortChain {
    private static final Logger log = LoggerFactory.getLogger(PortChain.class);

    private PortChain() {}

    /**
     * Opens {@code handler} for {@code spec}, publishing to {@code outputs}, and returns its port.
     *
     * @throws HandlerLoadException when its {@code open} throws
     */
    public static HandlerPort handler(LoadedHandler handler, SubscriptionSpec spec, Outputs outputs)
            throws HandlerLoadException {
        handler.open(context(spec, outputs, handler.classLoader()));
        return SdkHandlerPort.of(handler, spec);
    }

    /**
     * As {@link #handler(LoadedHandler, SubscriptionSpec, Outputs)}, where a batch handler (issue 47) gathers its
     * deliveries on {@code time} and reports its batches to {@code metrics}.
     *
     * @throws HandlerLoadException when its {@code open} throws
     */
    public static HandlerPort handler(
            LoadedHandler handler, SubscriptionSpec spec, Outputs outputs, Time time, DriverMetrics metrics)
            throws HandlerLoadException {
        if (!handler.isBatch()) {
            if (spec.batch().isPresent()) {
                log.warn(
                        "subscription '{}': batch: is set, but {} is a Handler, called with one message at a time;"
                                + " batch: is ignored. Remove it, or write the code as a BatchHandler",
                        spec.name(),
                        handler.className());
            }
            return handler(handler, spec, outputs);
        }
        HandlerPort gathered = SdkBatchPort.of(handler, spec).gathered(spec, time, metrics);
        handler.open(context(spec, outputs, handler.classLoader()));
        return gathered;
    }

    /**
     * A handler on the runtime's own class path (the kit's {@code forHandler}), opened as {@link #handler(LoadedHandler,
     * SubscriptionSpec, Outputs)} opens one from a JAR: its publishers build their schemas in its own class's loader.
     *
     * @throws Exception what its {@code open} throws
     */
    public static <T> HandlerPort handler(
            Handler<T> handler, Class<T> messageType, SubscriptionSpec spec, Outputs outputs) throws Exception {
        handler.open(context(spec, outputs, handler.getClass().getClassLoader()));
        return SdkHandlerPort.of(handler, messageType, spec);
    }

    /**
     * A batch handler on the runtime's own class path (the kit's {@code forBatchHandler}), opened as a handler of one
     * message is, gathering its deliveries on {@code time} and reporting its batches to {@code metrics}.
     *
     * @throws Exception what its {@code open} throws
     */
    public static <T> HandlerPort batchHandler(
            BatchHandler<T> handler,
            Class<T> messageType,
            SubscriptionSpec spec,
            Outputs outputs,
            Time time,
            DriverMetrics metrics)
            throws Exception {
        handler.open(context(spec, outputs, handler.getClass().getClassLoader()));
        return SdkBatchPort.of(handler, messageType, spec).gathered(spec, time, metrics);
    }

    /**
     * Initialises {@code function} for {@code spec} behind its port, reaching {@code around} outside itself; closes
     * the port again when {@code initialize} throws.
     *
     * @throws HandlerLoadException when its {@code initialize} throws
     */
    public static FunctionPort function(
            LoadedFunction function, SubscriptionSpec spec, Outputs outputs, FunctionPort.Surroundings around)
            throws HandlerLoadException {
        FunctionPort port = new FunctionPort(function, spec, outputs, around);
        try {
            port.open();
        } catch (HandlerLoadException | RuntimeException e) {
            port.close();
            throw e;
        }
        return port;
    }

    /**
     * What a handler is told about {@code spec} at {@code open}; its publishers publish to {@code outputs} ({@code
     * null}: it cannot publish) and build their schemas in {@code loader} ({@code null}: the published type's).
     */
    static SubscriptionContext context(SubscriptionSpec spec, Outputs outputs, ClassLoader loader) {
        return new SubscriptionContext(spec.name(), spec.topics().names(), spec.config(), outputs, loader);
    }
}
