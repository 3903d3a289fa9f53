package dev.settle.runtime.live;

import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SdkBatchPort;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.schema.SchemaInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which {@link Generation} a subscription runs, and the driver that runs it: a swap is the driver's
 * ({@link SubscriptionDriver#swap}, docs/live-code.md "The swap"), so a message costs nothing for it until a swap
 * happens. The consumer's schema is the first generation's for the consumer's life; later generations decode with
 * their own ({@code SdkHandlerPort.swappedIn}). The one swap of uploads, rollbacks, reloads and packages: whether a
 * handler fits ({@link #misfit}), the swap, and the old generation's retirement ({@link #swapIn}).
 *
 * <p>Thread-safe: swaps and driver starts run one at a time (this object's monitor); {@link #current()} is read
 * without it, so a status is answered while a swap waits for its calls.
 */
public final class CurrentGeneration {
    private static final Logger log = LoggerFactory.getLogger(CurrentGeneration.class);

    private final Schema<?> schema;
    private volatile Generation current;
    /** Guarded by this object's monitor: the driver running the current generation; null before it starts. */
    private SubscriptionDriver driver;
    /**
     * Guarded by this object's monitor: the port the driver runs instead of the current generation's own while a
     * canary ramp routes between two generations ({@link #route}); null without a ramp.
     */
    private HandlerPort routed;

    CurrentGeneration(Generation first) {
        this.schema = first.port.schema();
        this.current = first;
    }

    /**
     * A subscription's manifest handler (opened, behind {@code port}) as its first generation, for a subscription
     * without the admin API, whose code a manifest reload swaps ({@link #reload}).
     *
     * @param release hands the handler's class loader back to its deployment once it is swapped out and closed
     */
    public static CurrentGeneration ofManifest(LoadedHandler opened, HandlerPort port, Runnable release, Instant now) {
        return new CurrentGeneration(manifestGeneration(1, opened, port, release, now));
    }

    /**
     * Swaps in the handler of a reloaded manifest (opened, {@link #misfit fitting}) as the next generation,
     * retiring the running one (docs/live-code.md, "Manifest reload"); for a subscription without the admin API,
     * where {@code LiveCode} does not keep generations.
     *
     * @param release hands {@code next}'s class loader back to its deployment once it is swapped out
     * @return how long handler calls waited, in milliseconds
     */
    public synchronized double reload(
            LoadedHandler next, SubscriptionSpec spec, Runnable release, Duration grace, Instant now) {
        Generation generation =
                manifestGeneration(current.record.number() + 1, next, swappedIn(next, spec), release, now);
        Swap swap = swapIn(generation, grace, spec.name(), null);
        return Math.round(swap.pauseNanos() / 1_000.0) / 1_000.0;
    }

    private static Generation manifestGeneration(
            int number, LoadedHandler handler, HandlerPort port, Runnable release, Instant now) {
        return new Generation(
                new GenerationRecord(number, "", handler.className(), GenerationRecord.Source.MANIFEST, now),
                handler,
                port,
                null,
                release);
    }

    /** The handler running now. */
    public LoadedHandler handler() {
        return current.handler;
    }

    /**
     * Closes the running handler (its driver is stopped) and hands back its class loader when its deployment owns
     * it; a loader of its own is closed by its owner ({@code LiveCode}).
     */
    public synchronized void closeHandler() {
        Generation running = current;
        running.handler.close();
        if (running.releaseShared != null) {
            running.releaseShared.run();
        }
    }

    /** What a swap did: the generation it retired, how long new calls waited, and whether the old calls ended. */
    record Swap(Generation retired, long pauseNanos, boolean drained, SubscriptionDriver driver, long switchedNanos) {}

    /** The schema the consumer reads with: the first generation's. */
    Schema<?> consumerSchema() {
        return schema;
    }

    Generation current() {
        return current;
    }

    /**
     * Starts a driver on the current generation's port ({@code start} makes it); later swaps go through it. At start,
     * and when a reload restarts the subscription's consumer.
     */
    public synchronized SubscriptionDriver start(BiFunction<HandlerPort, Schema<?>, SubscriptionDriver> start) {
        // The consumer reads with the first generation's schema, also when a reload restarts it after a swap: the
        // swap's fit check compared each new generation with that one, not with each other.
        driver = start.apply(routed != null ? routed : current.port, schema);
        // A start is a generation serving every key: a restart with another JAR (a new image) is a fix too. Not one
        // that joins a canary ramp: the current generation then serves only the keys outside the canary's slice.
        if (routed == null) {
            servedByAll(current);
        }
        return driver;
    }

    /**
     * Tells the driver that {@code generation} serves every key now ({@code onCap: hold} re-drives what other code
     * held). Every swap and every start comes here; a canary slice, serving some keys only, must not.
     */
    private void servedByAll(Generation generation) {
        if (driver != null && driver.holdsForFix()) {
            driver.servedByAll(generation.heldBy());
        }
    }

    /**
     * Makes {@code next} (opened) current: new calls wait; the current generation's calls get up to {@code grace} to
     * finish; then {@code next} takes over. The retired generation is not closed here: its owner closes it once
     * {@link #awaitIdle} says its calls are over.
     */
    synchronized Swap swap(Generation next, Duration grace) {
        Generation retired = current;
        // A ramp's router is replaced too: the next generation serves every key.
        routed = null;
        if (driver == null) {
            current = next;
            return new Swap(retired, 0, true, null, 0);
        }
        SubscriptionDriver.Swap swap = driver.swap(next.port, grace);
        current = next;
        servedByAll(next);
        return new Swap(retired, swap.pauseNanos(), swap.drained(), driver, swap.switchedNanos());
    }

    /**
     * Makes {@code port} the driver's port, the current generation staying current: a canary ramp's router at each
     * step, or the current generation's own port again when the ramp ends. Waits as a {@link #swap} does, so a key
     * that changes generation has no call left on the one it leaves; the {@link Swap}'s {@code retired} is the current
     * generation, which is not to be closed.
     */
    synchronized Swap route(HandlerPort port, Duration grace) {
        routed = port == current.port ? null : port;
        if (driver == null) {
            return new Swap(current, 0, true, null, 0);
        }
        SubscriptionDriver.Swap swap = driver.swap(port, grace);
        return new Swap(current, swap.pauseNanos(), swap.drained(), driver, swap.switchedNanos());
    }

    /**
     * The port of {@code loaded} (a {@link #misfit fitting} handler) swapped in for the running generation: a handler
     * of one message behind its own port, a batch handler gathered as the running batch handler is (issue 47).
     *
     * @throws IllegalArgumentException when {@code loaded} and the running code differ in shape ({@link #misfit})
     */
    HandlerPort swappedIn(LoadedHandler loaded, SubscriptionSpec spec) {
        return loaded.isBatch()
                ? SdkBatchPort.swappedIn(loaded, spec).gatheredAfter(current.port, spec)
                : SdkHandlerPort.swappedIn(loaded, spec);
    }

    /**
     * Why {@code loaded} cannot take this subscription's messages, every problem: its shape (a batch handler or a
     * handler of one message, as the running code), its declared schema, and the consumer's, which stays the first
     * generation's; empty when it fits.
     */
    public List<String> misfit(LoadedHandler loaded, SubscriptionSpec spec) {
        List<String> problems = new ArrayList<>();
        boolean runningBatch = SdkBatchPort.gathers(current.port);
        if (loaded.isBatch() != runningBatch) {
            problems.add("handler " + loaded.className() + " is a " + shape(loaded.isBatch()) + ", but subscription '"
                    + spec.name() + "' runs a " + shape(runningBatch) + " (" + current + "): the driver sizes its"
                    + " deliveries in flight (concurrency x batch.maxMessages) and its key ordering for one shape when"
                    + " its consumer starts, so a swap keeps the shape. Swap in a " + shape(runningBatch) + ", or"
                    + " change the manifest's jar and restart the runtime to run the " + shape(loaded.isBatch()));
        }
        Preflight.schemaMisfit(spec, loaded).ifPresent(problems::add);
        if (!problems.isEmpty()) {
            return problems;
        }
        String consumer = schemaName(schema);
        String handler;
        try {
            handler = schemaName(
                    loaded.isBatch()
                            ? SdkBatchPort.swappedIn(loaded, spec).schema()
                            : SdkHandlerPort.swappedIn(loaded, spec).schema());
        } catch (RuntimeException e) {
            return List.of("handler " + loaded.className() + " takes "
                    + loaded.messageType().getTypeName() + ", for which no schema can be made: " + e.getMessage());
        }
        if (!handler.equals(consumer)) {
            problems.add("handler " + loaded.className() + " takes "
                    + loaded.messageType().getTypeName()
                    + ", read as " + handler + ", but subscription '" + spec.name() + "' consumes " + consumer
                    + "; use a handler of the same message type (a new type needs a new consumer: a restart with the"
                    + " manifest's jar)");
        }
        return problems;
    }

    private static String shape(boolean batch) {
        return batch ? "BatchHandler (many messages per call)" : "Handler (one message per call)";
    }

    /** The schema's type; AUTO_CONSUME (a String handler's raw payload) has no schema info of its own. */
    static String schemaName(Schema<?> schema) {
        SchemaInfo info = schema.getSchemaInfo();
        return info == null ? "AUTO_CONSUME (raw payloads)" : info.getType().toString();
    }

    /**
     * {@link #swap}s {@code next} in, then retires the old generation on a thread of its own (a handler's
     * {@code close()} that hangs holds up nobody): once its last calls end (at once, unless the swap's grace ran
     * out; closed anyway a grace later) its handler is closed, then its own class loader, which {@code loaders}
     * watches from then on, or its loader is handed back to the deployment that owns it.
     */
    Swap swapIn(Generation next, Duration grace, String subscription, RetiredLoaders loaders) {
        Swap swap = swap(next, grace);
        retireLater(swap, swap.retired(), grace, subscription, loaders);
        return swap;
    }

    /**
     * Closes {@code retired} on a thread of its own once the calls {@code swap} left running on it end (at once,
     * unless the swap's grace ran out; closed anyway a grace later): its handler, then its own class loader, which
     * {@code loaders} watches from then on, or its loader is handed back to the deployment that owns it.
     */
    static void retireLater(
            Swap swap, Generation retired, Duration grace, String subscription, RetiredLoaders loaders) {
        Thread thread = new Thread(
                () -> {
                    try {
                        if (!awaitIdle(swap, grace)) {
                            log.warn(
                                    "subscription '{}': {} still has handler calls running {} after the swap;"
                                            + " closing it anyway",
                                    subscription,
                                    retired,
                                    DurationText.format(grace.multipliedBy(2)));
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    retired.handler.close();
                    if (retired.ownLoader != null) {
                        retired.ownLoader.close();
                        if (loaders != null) {
                            loaders.retired(subscription, retired.toString(), retired.handler.classLoader());
                        }
                    } else if (retired.releaseShared != null) {
                        // The manifest's handler: its loader is this subscription's alone, and closed by the release.
                        retired.releaseShared.run();
                    }
                },
                "settle-retire-" + subscription + "-" + retired.record.number());
        thread.setDaemon(true);
        thread.start();
    }

    /** Waits up to {@code timeout} for the calls a swap left running on the retired generation; whether they ended. */
    static boolean awaitIdle(Swap swap, Duration timeout) throws InterruptedException {
        return swap.drained() || swap.driver().awaitCallsBefore(swap.switchedNanos(), timeout);
    }

    @Override
    public String toString() {
        return String.valueOf(current.handler);
    }
}
