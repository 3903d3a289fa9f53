package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** The swap gate on a driver's permits (docs/live-code.md, "The swap"), on a clock only the test moves. */
class PermitsTest {
    private final ManualTime time = new ManualTime();
    private final AtomicBoolean stopping = new AtomicBoolean();

    /** Polls (never sleeps for a timer) until {@code condition} holds, failing after 10 s. */
    private static void eventually(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("condition not met within 10 s").isLessThan(deadline);
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    @Test
    void aSwapWaitsForTheCallInFlightWhileANewCallWaitsAtTheGateThenGoesToTheNextPort() throws Exception {
        Permits permits = new Permits(2, time);
        assertThat(permits.take(stopping::get)).isTrue();
        List<String> order = new CopyOnWriteArrayList<>();

        CompletableFuture<SubscriptionDriver.Swap> swap =
                CompletableFuture.supplyAsync(() -> permits.swap(() -> order.add("switched"), Duration.ofSeconds(10)));
        // The swap took the free permit and waits for the one in flight.
        eventually(() -> time.waiting() == 1 && permits.available() == 0);
        Thread arriving = new Thread(() -> {
            try {
                if (permits.take(stopping::get)) {
                    order.add("called");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        arriving.start();
        eventually(() -> arriving.getState() == Thread.State.TIMED_WAITING);
        time.advance(Duration.ofMillis(200));
        assertThat(swap).isNotDone();
        assertThat(order).isEmpty();

        permits.release();

        SubscriptionDriver.Swap done = swap.get(10, TimeUnit.SECONDS);
        arriving.join(10_000);
        assertThat(done.drained()).isTrue();
        assertThat(done.pauseNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
        assertThat(order).containsExactly("switched", "called");
        assertThat(permits.available()).isEqualTo(1);
    }

    @Test
    void aSwapWaitsNoLongerThanTheGraceAndTheCallStillRunningKeepsItsPermit() throws Exception {
        Permits permits = new Permits(1, time);
        assertThat(permits.take(stopping::get)).isTrue();
        AtomicBoolean switched = new AtomicBoolean();

        CompletableFuture<SubscriptionDriver.Swap> swap =
                CompletableFuture.supplyAsync(() -> permits.swap(() -> switched.set(true), Duration.ofMillis(300)));
        eventually(() -> time.waiting() == 1);
        time.advance(Duration.ofMillis(299));
        assertThat(switched).isFalse();
        time.advance(Duration.ofMillis(1));

        SubscriptionDriver.Swap done = swap.get(10, TimeUnit.SECONDS);
        assertThat(done.drained()).isFalse();
        assertThat(done.pauseNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(300));
        assertThat(switched).isTrue();
        // The straggler still holds its permit, and gives it back when it ends.
        assertThat(permits.available()).isZero();
        permits.release();
        assertThat(permits.available()).isEqualTo(1);
    }

    @Test
    void aSwapWithNothingInFlightPausesNobody() {
        Permits permits = new Permits(4, time);
        SubscriptionDriver.Swap swap = permits.swap(() -> {}, Duration.ofSeconds(10));
        assertThat(swap.drained()).isTrue();
        assertThat(swap.pauseNanos()).isZero();
        assertThat(permits.available()).isEqualTo(4);
    }

    @Test
    void afterTheStopASwapOnlySwitchesAndTheReceiverTakesNothing() throws Exception {
        Permits permits = new Permits(2, time);
        assertThat(permits.drain(Duration.ZERO)).isTrue();
        AtomicBoolean switched = new AtomicBoolean();

        SubscriptionDriver.Swap swap = permits.swap(() -> switched.set(true), Duration.ofSeconds(10));

        assertThat(switched).isTrue();
        assertThat(swap.drained()).isTrue();
        assertThat(permits.available()).isZero();
        stopping.set(true);
        assertThat(permits.take(stopping::get)).isFalse();
    }

    @Test
    void theStopWaitsForTheCallsUpToItsTimeout() throws Exception {
        Permits permits = new Permits(2, time);
        assertThat(permits.take(stopping::get)).isTrue();
        CompletableFuture<Boolean> drained = CompletableFuture.supplyAsync(() -> {
            try {
                return permits.drain(Duration.ofSeconds(1));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        eventually(() -> time.waiting() == 1);
        time.advance(Duration.ofSeconds(1));
        assertThat(drained.get(10, TimeUnit.SECONDS)).isFalse();
    }

    @Test
    void aPermitGivenBackAfterTheGateClosedGoesToTheSwapNotToAReceiverThatWasAlreadyWaiting() throws Exception {
        Permits permits = new Permits(1, time);
        assertThat(permits.take(stopping::get)).isTrue();
        List<String> order = new CopyOnWriteArrayList<>();
        // Waiting for a permit with the gate still open: when the call's permit comes back, the semaphore hands it
        // to this thread first.
        Thread waiting = new Thread(() -> {
            try {
                if (permits.take(stopping::get)) {
                    order.add("called");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiting.start();
        eventually(() -> waiting.getState() == Thread.State.TIMED_WAITING);
        CompletableFuture<SubscriptionDriver.Swap> swap =
                CompletableFuture.supplyAsync(() -> permits.swap(() -> order.add("switched"), Duration.ofSeconds(10)));
        eventually(() -> time.waiting() == 1);

        permits.release();

        SubscriptionDriver.Swap done = swap.get(10, TimeUnit.SECONDS);
        waiting.join(10_000);
        assertThat(done.drained()).isTrue();
        assertThat(order).containsExactly("switched", "called");
    }

    @Test
    void aSwapAfterTheStopDoesNotSayTheOldCallsEnded() throws Exception {
        Permits permits = new Permits(1, time);
        assertThat(permits.take(stopping::get)).isTrue();
        CompletableFuture<Boolean> drain = CompletableFuture.supplyAsync(() -> {
            try {
                return permits.drain(Duration.ofMillis(100));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        eventually(() -> time.waiting() == 1);
        time.advance(Duration.ofMillis(100));
        assertThat(drain.get(10, TimeUnit.SECONDS)).as("the call still runs").isFalse();

        AtomicBoolean switched = new AtomicBoolean();
        SubscriptionDriver.Swap swap = permits.swap(() -> switched.set(true), Duration.ofSeconds(10));

        assertThat(switched).isTrue();
        // Its owner must wait for the call still running (by when it started) before closing the old code.
        assertThat(swap.drained()).isFalse();
    }

    @Test
    void theReceiverWaitsForAFreePermitBeforeItReceivesAndTakesNone() throws Exception {
        Permits permits = new Permits(1, time);
        assertThat(permits.awaitFree(stopping::get))
                .as("a free permit: at once")
                .isTrue();
        assertThat(permits.available()).as("and none taken").isEqualTo(1);
        assertThat(permits.take(stopping::get)).isTrue();
        AtomicBoolean free = new AtomicBoolean();
        Thread receiver = new Thread(() -> {
            try {
                free.set(permits.awaitFree(stopping::get));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        receiver.start();
        eventually(() -> receiver.getState() == Thread.State.TIMED_WAITING);
        assertThat(free).as("no permit is free while the call runs").isFalse();

        permits.release();

        receiver.join(10_000);
        assertThat(free).isTrue();
        assertThat(permits.available()).isEqualTo(1);
    }
}
