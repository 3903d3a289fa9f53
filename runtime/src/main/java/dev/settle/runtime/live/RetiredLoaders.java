package dev.settle.runtime.live;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every handler class loader a generation ran in, held weakly: how many are still alive (the running ones, and
 * retired ones not yet collected), and, some time after a generation is retired, a warning naming the threads that
 * keep its loader from being collected (a thread the handler started and never stopped is the usual culprit, the
 * class-loader leak of apache/pulsar#12973). Each retired loader is looked at once, so it is warned about once.
 *
 * <p>Thread-safe.
 */
final class RetiredLoaders implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RetiredLoaders.class);

    private final Set<WeakReference<ClassLoader>> tracked = ConcurrentHashMap.newKeySet();
    private final Duration check;
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "settle-retired-loaders");
        thread.setDaemon(true);
        return thread;
    });

    RetiredLoaders(Duration check) {
        this.check = check;
    }

    /** Counts {@code loader} as alive until it is collected. */
    void track(ClassLoader loader) {
        if (tracked.stream().noneMatch(ref -> ref.get() == loader)) {
            tracked.add(new WeakReference<>(loader));
        }
    }

    /** Looks at {@code loader} once, after the check delay, and warns if it is still reachable. */
    void retired(String subscription, String generation, ClassLoader loader) {
        WeakReference<ClassLoader> ref = new WeakReference<>(loader);
        scheduler.schedule(() -> look(subscription, generation, ref), check.toMillis(), TimeUnit.MILLISECONDS);
    }

    private static void look(String subscription, String generation, WeakReference<ClassLoader> ref) {
        List<String> pinning = pinningThreads(ref);
        if (pinning == null) {
            return;
        }
        log.warn(
                "subscription '{}': the class loader of retired {} is still reachable; {}",
                subscription,
                generation,
                pinning.isEmpty()
                        ? "no thread of its own pins it (something else still holds one of its objects)"
                        : "threads that pin it: " + String.join(", ", pinning)
                                + "; a handler must stop the threads it starts in close()");
    }

    /** The names of the threads whose context loader or class is the loader's; null when it was collected. */
    private static List<String> pinningThreads(WeakReference<ClassLoader> ref) {
        ClassLoader loader = ref.get();
        if (loader == null) {
            return null;
        }
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getContextClassLoader() == loader
                        || thread.getClass().getClassLoader() == loader)
                .map(Thread::getName)
                .sorted()
                .toList();
    }

    /** Loaders not yet collected: those running, and retired ones something still holds. */
    int alive() {
        tracked.removeIf(ref -> ref.get() == null);
        return tracked.size();
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
