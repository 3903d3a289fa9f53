package dev.settle.runtime;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops and closes several running subscriptions side by side, each on a thread of its own: the grace is the whole
 * runtime's, not each subscription's in turn, and code whose {@code close()} never returns cannot keep the caller
 * (a stop, a reload) waiting past its deadline.
 */
final class Stopping {
    private static final Logger log = LoggerFactory.getLogger(Stopping.class);

    private Stopping() {}

    /** Stops every driver at once and waits for them: each lets its calls run up to {@code grace}, then closes. */
    static void drain(List<RunningSubscription> subscriptions, Duration grace) {
        List<Thread> stopping = new ArrayList<>();
        for (RunningSubscription subscription : subscriptions) {
            Thread thread = new Thread(() -> subscription.stop(grace), "settle-stop-" + subscription.name());
            stopping.add(thread);
            thread.start();
        }
        for (Thread thread : stopping) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Closes the subscriptions' code (handlers, functions) on daemon threads, waiting no longer than
     * {@code deadlineNanos} on {@code time} (or a second, when the drain used up the grace): code still in its
     * {@code close()} then is named and left behind.
     */
    static void closeCode(List<RunningSubscription> subscriptions, long deadlineNanos, Duration grace, Time time) {
        List<Thread> closing = new ArrayList<>();
        for (RunningSubscription subscription : subscriptions) {
            Thread thread = new Thread(subscription::closeCode, "settle-close-" + subscription.name());
            thread.setDaemon(true);
            thread.start();
            closing.add(thread);
        }
        long until = Math.max(deadlineNanos, time.nanoTime() + TimeUnit.SECONDS.toNanos(1));
        try {
            time.await(
                    () -> closing.stream().noneMatch(Thread::isAlive),
                    Duration.ofNanos(Math.max(0, until - time.nanoTime())));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int i = 0; i < closing.size(); i++) {
            if (closing.get(i).isAlive()) {
                log.error(
                        "{} did not return from close() within the {} grace; stopping without it",
                        subscriptions.get(i).codeName(),
                        DurationText.format(grace));
            }
        }
    }
}
