package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.testbroker.Waits;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.impl.PulsarClientImpl;
import org.apache.pulsar.shade.io.netty.util.Timeout;
import org.junit.jupiter.api.Test;

class SharedTimerTest {
    @Test
    void aTimeoutRunsOnceWhenDueAndACancelledOneNever() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        AtomicInteger cancelledRuns = new AtomicInteger();
        long began = System.nanoTime();
        Timeout due = SharedTimer.INSTANCE.newTimeout(timeout -> ran.countDown(), 50, TimeUnit.MILLISECONDS);
        Timeout cancelled =
                SharedTimer.INSTANCE.newTimeout(timeout -> cancelledRuns.incrementAndGet(), 50, TimeUnit.MILLISECONDS);

        assertThat(cancelled.cancel()).isTrue();
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - began)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
        Waits.until("the due timeout marked expired", Duration.ofSeconds(10), due::isExpired, expired -> expired);
        assertThat(due.cancel()).as("a timeout that ran cannot be cancelled").isFalse();
        assertThat(cancelled.isCancelled()).isTrue();
        assertThat(cancelled.isExpired()).isFalse();
        // Long past the cancelled timeout's time: it did not run.
        CountDownLatch later = new CountDownLatch(1);
        SharedTimer.INSTANCE.newTimeout(timeout -> later.countDown(), 100, TimeUnit.MILLISECONDS);
        assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(cancelledRuns).hasValue(0);
    }

    @Test
    void aFailingTaskDoesNotStopTheOthers() throws Exception {
        SharedTimer.INSTANCE.newTimeout(
                timeout -> {
                    throw new IllegalStateException("a task that fails");
                },
                0,
                TimeUnit.MILLISECONDS);
        CountDownLatch next = new CountDownLatch(1);
        SharedTimer.INSTANCE.newTimeout(timeout -> next.countDown(), 10, TimeUnit.MILLISECONDS);
        assertThat(next.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void withNothingDueItsThreadSleeps() throws Exception {
        // Wake it once so that its thread exists, then let it idle: a wheel timer would wake 1 000 times a second.
        CountDownLatch woke = new CountDownLatch(1);
        SharedTimer.INSTANCE.newTimeout(timeout -> woke.countDown(), 0, TimeUnit.MILLISECONDS);
        assertThat(woke.await(10, TimeUnit.SECONDS)).isTrue();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long id = Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().equals("settle-pulsar-timer"))
                .findFirst()
                .orElseThrow()
                .getId();
        long cpuBefore = threads.getThreadCpuTime(id);
        Waits.pause(Duration.ofSeconds(1), "a second with nothing scheduled");
        long cpuNanos = threads.getThreadCpuTime(id) - cpuBefore;
        // The wheel's thread spent about 20 ms of CPU a second idle; asleep, this one spends none.
        assertThat(Duration.ofNanos(cpuNanos)).isLessThan(Duration.ofMillis(2));
    }

    @Test
    void everyClientTheRuntimeMakesUsesIt() throws Exception {
        // Building a client connects to nothing; the transactions' client would (to its coordinator): not built here.
        try (PulsarClient client = PulsarClients.create(PulsarSettings.of("pulsar://127.0.0.1:1"))) {
            assertThat(((PulsarClientImpl) client).timer()).isSameAs(SharedTimer.INSTANCE);
        }
    }
}
