package dev.settle.runtime;

import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.function.FunctionPort;
import dev.settle.runtime.live.CurrentGeneration;
import dev.settle.runtime.manifest.OutputOptions;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.ProducerSettings;
import dev.settle.runtime.publish.PulsarOutputs;
import java.time.Duration;
import java.util.Optional;
import java.util.function.BiFunction;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription while it runs: its spec, its code (a handler's {@link CurrentGeneration}, swapped with the
 * consumer open, or a Pulsar Function's port), the outputs its code publishes to, and its driver. It starts, swaps
 * (through its code), stops (the driver: the consumer is closed, acknowledgements flushed) and closes (the code,
 * then the outputs). {@link Subscriptions} is a map of these.
 *
 * <p>Thread-safe through its owner: {@link Subscriptions} starts and stops it under its own monitor; its code is closed
 * once its driver is stopped.
 */
final class RunningSubscription {
    private static final Logger log = LoggerFactory.getLogger(RunningSubscription.class);

    private final SubscriptionSpec spec;
    /** A handler's running generation; null for a function. */
    private final CurrentGeneration code;
    /** A function's port, closed with the subscription; null for a handler. */
    private final FunctionParts function;

    private final PulsarOutputs outputs;
    private volatile SubscriptionDriver driver;

    /** A function's port, which closes it, and what hands its class loader back to its deployment once closed. */
    record FunctionParts(FunctionPort port, Runnable release) {
        AutoCloseable close() {
            return port::close;
        }
    }

    private RunningSubscription(
            SubscriptionSpec spec, CurrentGeneration code, FunctionParts function, PulsarOutputs outputs) {
        this.spec = spec;
        this.code = code;
        this.function = function;
        this.outputs = outputs;
    }

    static RunningSubscription handler(SubscriptionSpec spec, CurrentGeneration code, PulsarOutputs outputs) {
        return new RunningSubscription(spec, code, null, outputs);
    }

    static RunningSubscription function(SubscriptionSpec spec, FunctionParts function, PulsarOutputs outputs) {
        return new RunningSubscription(spec, null, function, outputs);
    }

    String name() {
        return spec.name();
    }

    SubscriptionSpec spec() {
        return spec;
    }

    /** A handler's running generation; empty for a function. */
    Optional<CurrentGeneration> code() {
        return Optional.ofNullable(code);
    }

    /**
     * Starts a driver ({@code start} makes it) on the running code's port; a swap goes through it from then on.
     * At start, and when a reload restarts the consumer with {@code next}'s settings.
     */
    SubscriptionDriver start(BiFunction<HandlerPort, Schema<?>, SubscriptionDriver> start) {
        driver = code != null
                ? code.start(start)
                : start.apply(function.port(), function.port().schema());
        return driver;
    }

    /**
     * A copy running with {@code next}'s spec (a reload that restarts the consumer), the same code and outputs; the
     * outputs' producers are made again if {@code next} changes their settings. Once the driver is stopped.
     */
    RunningSubscription withSpec(SubscriptionSpec next) {
        outputs.reconfigure(producerSettings(next));
        return new RunningSubscription(next, code, function, outputs);
    }

    /** The producer settings of a subscription's {@code output:}. */
    static ProducerSettings producerSettings(SubscriptionSpec spec) {
        OutputOptions output = spec.outputs();
        return new ProducerSettings(
                output.batching(),
                output.batchingMaxDelay(),
                CompressionType.valueOf(output.compression().name()),
                output.maxPendingMessages());
    }

    /**
     * Stops the driver: the consumer is closed, acknowledgements flushed; the code goes on existing. A windowed
     * function lets go of its open windows first, so the stop does not wait its grace for windows that cannot fill:
     * their messages stay unacknowledged and come back.
     */
    void stop(Duration grace) {
        SubscriptionDriver running = driver;
        if (running == null) {
            return;
        }
        if (function != null) {
            function.port().stopping();
        }
        try {
            running.stop(grace);
        } finally {
            if (function != null) {
                function.port().stopped();
            }
        }
    }

    /** The driver's state, for a test that waited in vain ({@link SubscriptionDriver#describe()}). */
    String describe() {
        SubscriptionDriver running = driver;
        return running == null ? this + ": no driver" : running.describe();
    }

    /** The driver, once started. */
    Optional<SubscriptionDriver> driver() {
        return Optional.ofNullable(driver);
    }

    /** The outputs the code publishes to. */
    PulsarOutputs outputs() {
        return outputs;
    }

    /**
     * Closes the code: the running handler (handing back its deployment's class loader) or the function. A
     * handler's {@code close()} may hang: {@link Stopping#closeCode} runs this on a thread of its own with a deadline,
     * for a stop and for a reload that removes subscriptions (a reload's restart closes it in line). The driver is
     * stopped by then.
     */
    void closeCode() {
        if (code != null) {
            code.closeHandler();
        } else {
            closeQuietly(function.close());
            function.release().run();
        }
    }

    /** Names the code in logs: "handler com.acme.Orders", "function com.acme.Enrich". */
    String codeName() {
        return code != null ? "handler " + code.handler().className() : "function of " + this;
    }

    /** Closes the outputs, once the code that publishes to them is closed. */
    void closeOutputs() {
        closeQuietly(outputs);
    }

    private void closeQuietly(AutoCloseable part) {
        if (part == null) {
            return;
        }
        try {
            part.close();
        } catch (Exception | LinkageError e) {
            log.warn("subscription '{}': closing {} failed; stopping goes on", spec.name(), part, e);
        }
    }

    @Override
    public String toString() {
        return "subscription '" + spec.name() + "'";
    }
}
