package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class KeyOrderedExecutorTest {

    @Test
    void tasksWithTheSameKeyRunInSubmissionOrderWhileOtherKeysRunAlongside() throws Exception {
        KeyOrderedExecutor executor = new KeyOrderedExecutor("test", 4);
        Map<String, List<Integer>> order = new ConcurrentHashMap<>();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostRunning = new AtomicInteger();
        Map<String, AtomicInteger> runningPerKey = new ConcurrentHashMap<>();
        AtomicInteger sameKeyOverlaps = new AtomicInteger();
        int tasks = 400;
        CountDownLatch done = new CountDownLatch(tasks);
        for (int i = 0; i < tasks; i++) {
            String key = "k" + (i % 8);
            int value = i;
            executor.execute(key, slot -> {
                mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
                if (runningPerKey.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet() > 1) {
                    sameKeyOverlaps.incrementAndGet();
                }
                order.computeIfAbsent(key, k -> Collections.synchronizedList(new ArrayList<>()))
                        .add(value);
                // Deliberately slow: other keys' tasks must overlap this one, or the bound below means nothing.
                sleep(1);
                runningPerKey.get(key).decrementAndGet();
                running.decrementAndGet();
                done.countDown();
            });
        }

        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        executor.shutdownNow();
        order.values().forEach(values -> assertThat(values).isSorted().hasSize(tasks / 8));
        assertThat(sameKeyOverlaps.get()).isZero();
        assertThat(mostRunning.get()).isBetween(2, 4);
    }

    @Test
    void eachTaskIsToldItsThreadsSlot() throws Exception {
        KeyOrderedExecutor executor = new KeyOrderedExecutor("test", 3);
        List<Integer> slots = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(30);
        for (int i = 0; i < 30; i++) {
            executor.execute(null, slot -> {
                slots.add(slot);
                done.countDown();
            });
        }
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        executor.shutdownNow();
        assertThat(slots).allMatch(slot -> slot >= 0 && slot < 3);
    }

    @Test
    void aThreadKilledByItsTaskIsReplacedOnTheSameSlot() throws Exception {
        KeyOrderedExecutor executor = new KeyOrderedExecutor("test", 2);
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        List<Throwable> escaped = Collections.synchronizedList(new ArrayList<>());
        Thread.setDefaultUncaughtExceptionHandler((thread, e) -> escaped.add(e));
        try {
            // Both threads die, one after the other (an error escapes even a runtime that catches exceptions).
            for (int i = 0; i < 2; i++) {
                executor.execute("dies", slot -> {
                    throw new AssertionError("killed the pool thread");
                });
            }
            List<Integer> slots = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch done = new CountDownLatch(20);
            for (int i = 0; i < 20; i++) {
                executor.execute("k" + (i % 4), slot -> {
                    slots.add(slot);
                    done.countDown();
                });
            }

            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(slots).allMatch(slot -> slot >= 0 && slot < 2, "a slot in 0..1");
        } finally {
            executor.shutdownNow();
            Thread.setDefaultUncaughtExceptionHandler(before);
        }
    }

    private static void sleep(long millis) {
        try {
            // Deliberate: a task's work, so that tasks overlap (see the call); nothing is waited for here.
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
