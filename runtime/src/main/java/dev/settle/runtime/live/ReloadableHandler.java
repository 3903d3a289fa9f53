package dev.settle.runtime.live;

import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription's manifest handler, its {@link CurrentGeneration}, so that a manifest reload can swap in
 * the handler of a new manifest with the consumer kept open, as an upload is (docs/live-code.md, "Manifest
 * reload"). For subscriptions without the admin API; with it, {@link LiveCode#reloaded} does the same as a new
 * generation.
 *
 * <p>Swaps of one subscription run one at a time (this object's monitor).
 */
public final class ReloadableHandler {
    private static final Logger log = LoggerFactory.getLogger(ReloadableHandler.class);

    private final String subscription;
    private final CurrentGeneration port;
    private int number = 1;

    private ReloadableHandler(String subscription, CurrentGeneration port) {
        this.subscription = subscription;
        this.port = port;
    }

    /**
     * The port of an opened handler.
     *
     * @param release hands the handler's class loader back to its deployment once it is swapped out and closed
     */
    public static ReloadableHandler of(LoadedHandler opened, SubscriptionSpec spec, Runnable release) {
        return new ReloadableHandler(
                spec.name(), new CurrentGeneration(generation(1, opened, SdkHandlerPort.of(opened, spec), release)));
    }

    /** The running generation, which starts the subscription's driver. */
    public CurrentGeneration code() {
        return port;
    }

    /** The handler running now. */
    public LoadedHandler running() {
        return port.current().handler;
    }

    /**
     * Why {@code next} cannot take the messages of the open consumer, if it cannot: its message type must be read
     * with the same schema (a new type needs a new consumer).
     */
    public Optional<String> misfit(LoadedHandler next, SubscriptionSpec spec) {
        Optional<String> declared = Preflight.schemaMisfit(spec, next);
        if (declared.isPresent()) {
            return declared;
        }
        String consumer = LiveSubscription.schemaName(port.consumerSchema());
        String handler;
        try {
            handler = LiveSubscription.schemaName(
                    SdkHandlerPort.swappedIn(next, spec).schema());
        } catch (RuntimeException e) {
            return Optional.of("no schema can be made for " + next.messageType().getTypeName() + ": " + e.getMessage());
        }
        return handler.equals(consumer)
                ? Optional.empty()
                : Optional.of(
                        "handler " + next.className() + " is read as " + handler + ", the consumer reads " + consumer);
    }

    /**
     * Swaps {@code next} (opened, and {@link #misfit fitting}) in: new calls wait, the running handler's calls get up
     * to {@code grace}, then {@code next} takes over; the old handler is closed and released in the background once
     * its last call ends.
     *
     * @return how long handler calls waited, in milliseconds
     */
    public synchronized double swap(LoadedHandler next, SubscriptionSpec spec, Runnable release, Duration grace) {
        number++;
        CurrentGeneration.Swap swap =
                port.swap(generation(number, next, SdkHandlerPort.swappedIn(next, spec), release), grace);
        Generation retired = swap.retired();
        Thread thread = new Thread(
                () -> {
                    try {
                        if (!CurrentGeneration.awaitIdle(swap, grace)) {
                            log.warn(
                                    "subscription '{}': handler {} still has calls running {} after the swap;"
                                            + " closing it anyway",
                                    subscription,
                                    retired.handler,
                                    DurationText.format(grace.multipliedBy(2)));
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    retired.handler.close();
                    retired.releaseShared.run();
                },
                "settle-retire-" + subscription + "-" + retired.record.number());
        thread.setDaemon(true);
        thread.start();
        return Math.round(swap.pauseNanos() / 1_000.0) / 1_000.0;
    }

    /** Closes the running handler (its driver is stopped) and hands its class loader back. */
    public synchronized void close() {
        Generation running = port.current();
        running.handler.close();
        running.releaseShared.run();
    }

    private static Generation generation(int number, LoadedHandler handler, HandlerPort port, Runnable release) {
        return new Generation(
                new GenerationRecord(
                        number,
                        "",
                        handler.className(),
                        GenerationRecord.Source.MANIFEST,
                        Clock.systemUTC().instant()),
                handler,
                port,
                null,
                release);
    }
}
