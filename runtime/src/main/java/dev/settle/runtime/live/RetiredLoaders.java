package dev.settle.runtime.live;

import dev.settle.runtime.isolation.ContextClassLoader;
import dev.settle.runtime.time.Time;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every handler class loader a generation ran in, held weakly: how many are still alive (the running ones, and
 * retired ones not yet collected), and, some time after a generation is retired, a warning naming the threads that
 * keep its loader from being collected (a thread the handler started and never stopped is the usual culprit, the
 * class-loader leak of apache/pulsar#12973). Each retired loader is looked at once, so it is warned about once.
 *
 * <p>A loader nothing holds any more is still reachable until a collection runs, which an idle runtime may not do
 * for hours: before it warns, a check asks for one ({@code System.gc()}) and waits up to {@link #COLLECTION_WAIT}
 * for the loaders to go. One check looks at every retired loader that is due, with one collection for all of them:
 * a rollout that retires many generations at once does not ask for a full collection per loader.
 *
 * <p>Thread-safe. The delay runs on the runtime's {@link Time}; the look (a collection, a list of threads) on a
 * thread of its own, never the timer's.
 */
final class RetiredLoaders implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RetiredLoaders.class);
    /** How long a retired loader may take to go once a collection was asked for. */
    static final Duration COLLECTION_WAIT = Duration.ofSeconds(2);

    private final Set<WeakReference<ClassLoader>> tracked = ConcurrentHashMap.newKeySet();
    /** Retired loaders not looked at yet. */
    private final Queue<Retiree> pending = new ConcurrentLinkedQueue<>();

    private final Duration check;
    private final Time time;
    private final ExecutorService looker = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "settle-retired-loaders");
        thread.setDaemon(true);
        return thread;
    });
    private final AtomicInteger looked = new AtomicInteger();
    private final AtomicInteger warnings = new AtomicInteger();
    private final AtomicInteger collections = new AtomicInteger();

    /** A retired loader, held weakly, and when it is due to be looked at (on {@link #time}). */
    private record Retiree(String subscription, String generation, WeakReference<ClassLoader> ref, long dueNanos) {}

    RetiredLoaders(Duration check, Time time) {
        this.check = check;
        this.time = time;
    }

    /** Counts {@code loader} as alive until it is collected. */
    void track(ClassLoader loader) {
        if (tracked.stream().noneMatch(ref -> ref.get() == loader)) {
            tracked.add(new WeakReference<>(loader));
        }
    }

    /** Looks at {@code loader} once, after the check delay, and warns if it is still reachable after a collection. */
    void retired(String subscription, String generation, ClassLoader loader) {
        pending.add(
                new Retiree(subscription, generation, new WeakReference<>(loader), time.nanoTime() + check.toNanos()));
        try {
            time.schedule(check, () -> looker.execute(this::look));
        } catch (RejectedExecutionException stopping) {
            // The runtime is stopping: nothing to warn about any more.
        }
    }

    /** Looks at every retired loader that is due, asking for one collection for all of them. */
    private void look() {
        long now = time.nanoTime();
        List<Retiree> due = new ArrayList<>();
        for (Iterator<Retiree> it = pending.iterator(); it.hasNext(); ) {
            Retiree retiree = it.next();
            if (now - retiree.dueNanos() >= 0) {
                due.add(retiree);
                it.remove();
            }
        }
        if (due.isEmpty()) {
            // Looked at by an earlier check already.
            return;
        }
        try {
            if (due.stream().anyMatch(retiree -> retiree.ref().get() != null)) {
                collections.incrementAndGet();
                System.gc();
                time.await(() -> due.stream().allMatch(retiree -> retiree.ref().get() == null), COLLECTION_WAIT);
            }
            due.forEach(this::warnIfPinned);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            looked.addAndGet(due.size());
        }
    }

    private void warnIfPinned(Retiree retiree) {
        List<String> pinning = pinningThreads(retiree.ref());
        if (pinning == null) {
            return;
        }
        warnings.incrementAndGet();
        log.warn(
                "subscription '{}': the class loader of retired {} is still reachable after a garbage collection; {}",
                retiree.subscription(),
                retiree.generation(),
                pinning.isEmpty()
                        ? "no thread of its own pins it (something else still holds one of its objects)"
                        : "threads that pin it: " + String.join(", ", pinning)
                                + "; a handler must stop the threads it starts in close()");
    }

    /**
     * The names of the threads whose context loader is the loader (or the safety net over it) or whose class is the
     * loader's; null when it was collected.
     */
    private static List<String> pinningThreads(WeakReference<ClassLoader> ref) {
        ClassLoader loader = ref.get();
        if (loader == null) {
            return null;
        }
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> ContextClassLoader.isOrWraps(thread.getContextClassLoader(), loader)
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

    /** Retired loaders looked at so far. */
    int looked() {
        return looked.get();
    }

    /** Collections asked for so far: at most one a check. */
    int collections() {
        return collections.get();
    }

    /** Retired loaders warned about so far. */
    int warnings() {
        return warnings.get();
    }

    @Override
    public void close() {
        looker.shutdownNow();
    }
}
