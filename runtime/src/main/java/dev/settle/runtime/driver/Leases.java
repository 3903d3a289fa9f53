package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease check of one subscription (issue 44): gives up every call past its deadline ({@code handlerTimeout}
 * from the call's start, moved by {@code Delivery.extend}) — interrupted, settled as a {@code timeout} failure, its
 * permit back — and counts the threads that ignore their interrupt. One task per subscription on the shared timer,
 * whatever the number of calls: a call that ends in time costs no timer.
 */
final class Leases {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionDriver.class);
    /** How often the lease check looks at most: a call is given up within this much past its deadline. */
    private static final Duration TICK = Duration.ofMillis(100);
    /** The shortest tick, for a very short {@code handlerTimeout}. */
    private static final Duration TICK_FLOOR = Duration.ofMillis(1);
    /** A thread still in a call this long after its deadline ignores its interrupt (one that heeds it is back in ms). */
    private static final Duration IGNORING_AFTER = Duration.ofSeconds(1);

    private final SubscriptionSpec spec;
    private final Time time;
    private final RunningCalls calls;
    private final Processing processing;
    private final DriverMetrics metrics;
    /** How often the check runs: {@link #TICK}, or a quarter of a shorter {@code handlerTimeout}. */
    private final Duration tick;
    /** The next check; replaced by each check. */
    private volatile Time.Scheduled next;
    /** Set once the stop's grace is over: no check runs after it. */
    private volatile boolean ended;
    /** Threads still in a call given up at its deadline, as the last check counted them. */
    private volatile int ignoringInterrupt;

    Leases(SubscriptionSpec spec, Time time, RunningCalls calls, Processing processing, DriverMetrics metrics) {
        this.spec = spec;
        this.time = time;
        this.calls = calls;
        this.processing = processing;
        this.metrics = metrics;
        Duration quarter = spec.handlerTimeout().dividedBy(4);
        this.tick = quarter.compareTo(TICK) < 0 ? (quarter.compareTo(TICK_FLOOR) < 0 ? TICK_FLOOR : quarter) : TICK;
    }

    void start() {
        next = time.schedule(tick, this::check);
    }

    /** No check runs from now on: the stop's grace is over (a call past its deadline during the grace timed out). */
    void end() {
        ended = true;
        Time.Scheduled scheduled = next;
        if (scheduled != null) {
            scheduled.cancel();
        }
    }

    /** Threads still in a call given up at its deadline more than a second ago: they ignore the interrupt. */
    int callsIgnoringInterrupt() {
        return ignoringInterrupt;
    }

    private void check() {
        if (ended) {
            return;
        }
        try {
            int ignoring = calls.expireOverdue(processing::timedOut, IGNORING_AFTER);
            if (ignoring != ignoringInterrupt) {
                if (ignoring > ignoringInterrupt) {
                    log.warn(
                            "subscription '{}': {} of its {} handler threads are still in a call given up at its"
                                    + " deadline (handlerTimeout {}) and ignore their interrupt{}",
                            spec.name(),
                            ignoring,
                            spec.concurrency(),
                            DurationText.format(spec.handlerTimeout()),
                            ignoring >= spec.concurrency() ? ": nothing more is handled, and /livez fails" : "");
                }
                ignoringInterrupt = ignoring;
                metrics.callsIgnoringInterrupt(ignoring);
            }
        } catch (RuntimeException e) {
            // A bug in a settlement must not end the leases of every later call.
            log.error("subscription '{}': the lease check failed; it runs again", spec.name(), e);
        } finally {
            if (!ended) {
                try {
                    next = time.schedule(tick, this::check);
                } catch (RejectedExecutionException closed) {
                    // The runtime's timer is closed: the runtime stops.
                }
            }
        }
    }
}
