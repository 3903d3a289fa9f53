package dev.settle.runtime;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.live.CurrentGeneration;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.live.ManifestChange;
import dev.settle.runtime.live.SwapRefusedException;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.HandlerContext;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a manifest reload does to one subscription (docs/live-code.md, "Manifest reload"): adds it, drains and stops
 * it, swaps its code with the consumer kept open, restarts its consumer, or leaves it; an added one whose code does
 * not open is shown unready and retried with backoff ({@link PendingSubscription}) until it starts or a reload
 * changes it.
 *
 * <p>Runs under the monitor of the {@link Subscriptions} it changes, which guards its state too.
 */
final class SubscriptionChanges {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionChanges.class);

    /** Subscriptions a reload added whose code did not open yet, by name. Guarded by the subscriptions' monitor. */
    private final Map<String, PendingSubscription> pending = new LinkedHashMap<>();
    /** Runs the retries of {@link #pending}, off the timer's one thread (opening code may take long). */
    private final ExecutorService retrier = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "settle-reload-retry");
        thread.setDaemon(true);
        return thread;
    });

    private final Subscriptions subscriptions;
    private final HealthEndpoint health;
    private final Duration grace;
    private final Time time;

    SubscriptionChanges(Subscriptions subscriptions, HealthEndpoint health, Duration grace, Time time) {
        this.subscriptions = subscriptions;
        this.health = health;
        this.grace = grace;
        this.time = time;
    }

    /**
     * Does what {@code kind} says to subscription {@code name}; a failure throws, and what ran runs on as it was, or,
     * added, is retried.
     *
     * @param removed where a removed subscription goes, for the caller to close once it lets go of the monitor
     */
    void apply(
            String name,
            ManifestChange.Kind kind,
            Deployment next,
            SubscriptionSpec spec,
            String jarSha256,
            List<RunningSubscription> removed)
            throws HandlerLoadException, SwapRefusedException, IOException {
        LiveCode live = subscriptions.live().orElse(null);
        PendingSubscription waiting = pending.get(name);
        if (waiting != null) {
            // Added by an earlier reload and not started yet: nothing of it runs, so any change starts it afresh.
            if (kind == ManifestChange.Kind.UNCHANGED) {
                next.release(name);
                return;
            }
            forget(waiting);
            if (kind == ManifestChange.Kind.REMOVED) {
                log.info("subscription '{}': removed by a manifest reload before it started", name);
                return;
            }
            start(next, spec);
            return;
        }
        switch (kind) {
            case UNCHANGED -> next.release(name);
            case REMOVED -> removed.add(subscriptions.stop(name));
            case ADDED -> start(next, spec);
            case SWAP -> swap(next, spec, jarSha256, live);
            case RESTART -> restart(next, spec, live);
        }
    }

    /**
     * Restarts a subscription's consumer with {@code spec}'s settings, all or nothing: when its new code or driver
     * cannot open, the running one is started again as it was and this throws.
     */
    private void restart(Deployment next, SubscriptionSpec spec, LiveCode live) throws HandlerLoadException {
        String name = spec.name();
        RunningSubscription running = subscriptions.get(name);
        boolean function = running.code().isEmpty();
        if (live != null && !function) {
            // With the admin API, the running generation (an upload, perhaps) goes on running.
            next.release(name);
            RunningSubscription stopped = subscriptions.stop(name);
            try {
                subscriptions.start(stopped.withSpec(spec));
            } catch (RuntimeException e) {
                subscriptions.start(stopped.withSpec(stopped.spec()));
                throw e;
            }
            return;
        }
        RunningSubscription fresh;
        if (function) {
            // A function stops before its new instance initialises: initialize reads back the state the old one
            // wrote. (Functions keep no generations: with the admin API too, their code is the manifest's.)
            subscriptions.stop(name);
            try {
                fresh = subscriptions.opener().open(next, spec);
            } catch (HandlerLoadException | RuntimeException e) {
                subscriptions.start(running);
                throw e;
            }
        } else {
            // A handler's new code opens beside the running one: when it cannot, nothing running was touched.
            fresh = subscriptions.opener().open(next, spec);
            subscriptions.stop(name);
        }
        try {
            subscriptions.start(fresh);
        } catch (RuntimeException e) {
            fresh.closeCode();
            fresh.closeOutputs();
            subscriptions.start(running);
            throw e;
        }
        running.closeCode();
        running.closeOutputs();
        log.info("subscription '{}': restarted by a manifest reload", name);
    }

    /**
     * Opens and starts an added subscription; when its code cannot open (or its driver start), it is shown unready
     * with the cause and retried with backoff until it starts, or until a reload changes or removes it; this throws.
     */
    private void start(Deployment next, SubscriptionSpec spec) throws HandlerLoadException {
        try {
            open(next, spec);
        } catch (HandlerLoadException | RuntimeException e) {
            PendingSubscription waiting = new PendingSubscription(next, spec);
            pending.put(spec.name(), waiting);
            waiting.failed(e);
            health.watch(waiting);
            retryLater(waiting);
            throw e;
        }
        log.info("subscription '{}': started by a manifest reload", spec.name());
    }

    /** Opens and starts a subscription of {@code next}; closes what it opened again when the driver cannot start. */
    private void open(Deployment next, SubscriptionSpec spec) throws HandlerLoadException {
        RunningSubscription opened = subscriptions.opener().open(next, spec);
        try {
            subscriptions.start(opened);
        } catch (RuntimeException e) {
            opened.closeCode();
            opened.closeOutputs();
            throw e;
        }
    }

    private void retryLater(PendingSubscription waiting) {
        try {
            time.schedule(waiting.delay, () -> {
                try {
                    retrier.execute(() -> retry(waiting));
                } catch (RejectedExecutionException stopping) {
                    // The runtime is stopping: nothing is retried any more.
                }
            });
        } catch (RejectedExecutionException stopping) {
            // The runtime is stopping: nothing is retried any more.
        }
    }

    /** Tries an added subscription again, unless a reload changed or removed it meanwhile. Off the timer's thread. */
    private void retry(PendingSubscription waiting) {
        String name = waiting.spec.name();
        synchronized (subscriptions) {
            if (subscriptions.isClosed() || pending.get(name) != waiting) {
                return;
            }
            try {
                waiting.from.loadAgain(name);
                open(waiting.from, waiting.spec);
            } catch (HandlerLoadException | RuntimeException e) {
                waiting.from.release(name);
                waiting.failed(e);
                log.warn(
                        "subscription '{}': attempt {} to start it failed, next in {}: {}",
                        name,
                        waiting.attempts,
                        DurationText.format(waiting.delay),
                        waiting.cause);
                retryLater(waiting);
                return;
            }
            pending.remove(name);
            log.info("subscription '{}': started by a manifest reload, at attempt {}", name, waiting.attempts + 1);
        }
    }

    /** Stops retrying an added subscription and takes it out of /readyz. */
    private void forget(PendingSubscription waiting) {
        pending.remove(waiting.spec.name());
        health.unwatch(waiting.spec.name());
        waiting.from.release(waiting.spec.name());
    }

    /** Swaps the new manifest's handler in with the consumer kept open. */
    private void swap(Deployment next, SubscriptionSpec spec, String jarSha256, LiveCode live)
            throws HandlerLoadException, SwapRefusedException, IOException {
        LoadedHandler handler = next.handler(spec.name());
        RunningSubscription subscription = subscriptions.get(spec.name());
        HandlerContext context = PortChain.context(spec, subscription.outputs(), handler.classLoader());
        Runnable release = () -> next.release(spec.name());
        if (live != null) {
            live.reloaded(spec, context, handler, jarSha256, release);
            return;
        }
        CurrentGeneration code = subscription.code().orElseThrow();
        List<String> misfit = code.misfit(handler, spec);
        if (!misfit.isEmpty()) {
            next.release(spec.name());
            throw new IllegalArgumentException(String.join("; ", misfit)
                    + "; a new message type needs a new consumer: change a consumer setting too, or restart; the"
                    + " running handler goes on");
        }
        handler.open(context);
        double waited = code.reload(handler, spec, release, grace, time.instant());
        log.info(
                "subscription '{}': handler {} swapped in by a manifest reload (handler calls waited {} ms)",
                spec.name(),
                handler,
                waited);
    }

    /** Stops every retry: the runtime is stopping. */
    void close() {
        synchronized (subscriptions) {
            retrier.shutdownNow();
            List.copyOf(pending.values()).forEach(this::forget);
        }
    }

    /** Whether an added subscription waits for a retry. */
    boolean pending(String name) {
        return pending.containsKey(name);
    }

    /** Whether an added subscription waits for a retry with the code of {@code deployment}. */
    boolean waitsOn(Deployment deployment) {
        return pending.values().stream().anyMatch(waiting -> waiting.from == deployment);
    }
}
