package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** The retired-loader check (issue 30, item 5): no warning for a loader a collection frees, one for a pinned one. */
class RetiredLoadersTest {
    private static final Duration CHECK = Duration.ofSeconds(60);
    private final ManualTime time = new ManualTime();

    /** Polls (never sleeps for a timer) until {@code condition} holds, failing after 30 s. */
    private static void eventually(BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition not met within 30 s").isLessThan(deadline);
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    private static void retire(RetiredLoaders loaders) {
        // Made and dropped here, so that only the check's weak reference is left once this returns.
        ClassLoader loader = new URLClassLoader(new URL[0], null);
        loaders.track(loader);
        loaders.retired("orders", "generation 1", loader);
    }

    @Test
    void aRetiredLoaderNothingHoldsIsNotWarnedAboutThoughNoCollectionRanBeforeTheCheck() {
        try (RetiredLoaders loaders = new RetiredLoaders(CHECK, time)) {
            retire(loaders);
            assertThat(loaders.alive()).isEqualTo(1);

            time.advance(CHECK);
            eventually(() -> loaders.looked() == 1 || time.waiting() == 1);
            // A collection that did not free it in time would leave the check waiting: let that wait end.
            time.advance(RetiredLoaders.COLLECTION_WAIT);
            eventually(() -> loaders.looked() == 1);

            assertThat(loaders.warnings()).isZero();
            assertThat(loaders.alive()).isZero();
        }
    }

    @Test
    void aRetiredLoaderAThreadStillHoldsIsWarnedAboutOnce() throws Exception {
        ClassLoader pinned = new URLClassLoader(new URL[0], null);
        CountDownLatch stop = new CountDownLatch(1);
        Thread leftBehind = new Thread(() -> {
            try {
                stop.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        leftBehind.setContextClassLoader(pinned);
        leftBehind.start();
        try (RetiredLoaders loaders = new RetiredLoaders(CHECK, time)) {
            loaders.track(pinned);
            loaders.retired("orders", "generation 1", pinned);

            time.advance(CHECK);
            eventually(() -> time.waiting() == 1);
            time.advance(RetiredLoaders.COLLECTION_WAIT);
            eventually(() -> loaders.looked() == 1);

            assertThat(loaders.warnings()).isEqualTo(1);
            assertThat(loaders.alive()).isEqualTo(1);
        } finally {
            stop.countDown();
            leftBehind.join(10_000);
        }
    }

    @Test
    void loadersRetiredTogetherAreLookedAtWithOneCollection() throws Exception {
        List<ClassLoader> pinned = List.of(
                new URLClassLoader(new URL[0], null),
                new URLClassLoader(new URL[0], null),
                new URLClassLoader(new URL[0], null));
        CountDownLatch stop = new CountDownLatch(1);
        List<Thread> leftBehind = new ArrayList<>();
        for (ClassLoader loader : pinned) {
            Thread thread = new Thread(() -> {
                try {
                    stop.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            thread.setContextClassLoader(loader);
            thread.start();
            leftBehind.add(thread);
        }
        try (RetiredLoaders loaders = new RetiredLoaders(CHECK, time)) {
            for (int i = 0; i < pinned.size(); i++) {
                loaders.track(pinned.get(i));
                loaders.retired("orders", "generation " + (i + 1), pinned.get(i));
            }

            time.advance(CHECK);
            eventually(() -> time.waiting() == 1);
            time.advance(RetiredLoaders.COLLECTION_WAIT);
            eventually(() -> loaders.looked() == 3);

            assertThat(loaders.collections()).isEqualTo(1);
            assertThat(loaders.warnings()).isEqualTo(3);
        } finally {
            stop.countDown();
            for (Thread thread : leftBehind) {
                thread.join(10_000);
            }
        }
    }
}
