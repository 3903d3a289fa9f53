package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.FakeCoordinator.SPARE_AGE;
import static dev.settle.runtime.driver.FakeCoordinator.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.MessageId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Which transactions are open, on manual time with a fake coordinator: the one deliveries join, the spare begun
 * ahead, each given up at its timeout, and aborts decided where deliveries join.
 */
class TransactionPoolTest {
    private final ManualTime time = new ManualTime();
    private final RecordingMetrics metrics = new RecordingMetrics();
    private final FakeCoordinator coordinator = new FakeCoordinator();
    private final TransactionAborts aborts =
            new TransactionAborts("orders", TIMEOUT, new TransactionEnds("orders", time, () -> false), metrics, time);

    @AfterEach
    void stopTimer() {
        time.close();
    }

    private TransactionPool pool(int maxDeliveries) {
        return new TransactionPool(coordinator.transactions, maxDeliveries, SPARE_AGE, aborts, time);
    }

    private static MessageId input(int n) {
        return new FakeCoordinator.FakeId(n);
    }

    private static TransactionFailedException failedAfterSending() {
        return new TransactionFailedException("a delivery failed after sending an output", null);
    }

    @Test
    void deliveriesJoinTheOpenTransactionAndTheNextOneIsBegunAhead() {
        TransactionPool pool = pool(100);

        TransactionPool.Joined first = pool.join(input(1));
        TransactionPool.Joined second = pool.join(input(2));

        assertThat(first.opened()).isTrue();
        assertThat(second.opened()).isFalse();
        assertThat(second.transaction()).isSameAs(first.transaction());
        assertThat(coordinator.begun).as("the open one and the spare").hasSize(2);
        assertThat(pool.open()).isSameAs(first.transaction());
    }

    @Test
    void aFullTransactionLeavesTheOpenSlot() {
        TransactionPool pool = pool(1);

        TransactionPool.Joined joined = pool.join(input(1));

        assertThat(joined.full()).isTrue();
        assertThat(joined.transaction().state()).isEqualTo(SharedTransaction.State.CLOSED);
        assertThat(pool.open()).isNull();
        assertThat(pool.join(input(2)).transaction()).isNotSameAs(joined.transaction());
    }

    @Test
    void aCopyOfAnInputTheOpenTransactionHoldsClosesItAndJoinsTheNext() {
        TransactionPool pool = pool(100);
        SharedTransaction first = pool.join(input(1)).transaction();

        TransactionPool.Joined copy = pool.join(input(1));

        assertThat(copy.closedForCopy()).isSameAs(first);
        assertThat(copy.transaction()).isNotSameAs(first);
        assertThat(copy.opened()).isTrue();
    }

    @Test
    void noDeliveryJoinsAnAbortedTransaction() {
        TransactionPool pool = pool(100);
        SharedTransaction failed = pool.join(input(1)).transaction();

        pool.abort(failed, failedAfterSending());

        assertThat(pool.open()).isNull();
        assertThat(pool.join(input(2)).transaction()).isNotSameAs(failed);
    }

    /**
     * An abort decided while another thread begins a delivery: the delivery joins the transaction before the abort
     * (and fails with it, for its companion's cause) or the next one, never one already aborted (it would fail at once,
     * costing an attempt for nothing). The test holds the pool's monitor, where deliveries join, while the failing
     * delivery's thread aborts, so the two meet at the point where they used to overlap.
     */
    @Test
    void aDeliveryBegunWhileAnAbortIsDecidedNeverJoinsTheAbortedTransaction() throws Exception {
        TransactionPool pool = pool(100);
        SharedTransaction failing = pool.join(input(1)).transaction();
        Thread aborting = new Thread(() -> pool.abort(failing, failedAfterSending()), "aborting");
        CompletableFuture<Void> probe = new CompletableFuture<>();
        boolean abortedWhenJoined;

        synchronized (pool) {
            aborting.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (aborting.getState() != Thread.State.BLOCKED) {
                assertThat(System.nanoTime())
                        .as("the aborting thread reaches the pool's monitor")
                        .isLessThan(deadline);
                Thread.onSpinWait();
            }
            SharedTransaction joined = pool.join(input(2)).transaction();
            // An acknowledging delivery of an aborted transaction fails at once.
            joined.expect(probe);
            abortedWhenJoined = probe.isDone();
        }
        aborting.join(Duration.ofSeconds(30).toMillis());

        assertThat(abortedWhenJoined)
                .as("the transaction it joined was aborted already")
                .isFalse();
        assertThat(probe)
                .as("failed with its companion's abort, which came after it joined")
                .isCompletedExceptionally();
        assertThat(FakeCoordinator.failure(probe))
                .hasMessageContaining("failed after sending an output")
                .hasMessageNotContaining("ran out");
    }

    @Test
    void anOpenTransactionIsGivenUpAtItsTimeoutAndTheNextDeliveryOpensAnother() {
        TransactionPool pool = pool(100);
        SharedTransaction open = pool.join(input(1)).transaction();
        CompletableFuture<Void> committed = new CompletableFuture<>();
        open.expect(committed);

        time.advance(TIMEOUT.minusMillis(1));
        assertThat(open.expired).isNotDone();
        time.advance(Duration.ofMillis(1));

        assertThat(open.expired).isCompletedExceptionally();
        assertThat(open.state()).isEqualTo(SharedTransaction.State.ABORTED);
        assertThat(FakeCoordinator.failure(committed)).hasMessageContaining("ran out of its timeout (PT35S)");
        assertThat(coordinator.begun.get(0).aborts)
                .as("sent at once, a call still running")
                .hasValue(1);
        assertThat(metrics.transactionsTimedOut).hasValue(1);
        assertThat(pool.open()).isNull();
        assertThat(pool.join(input(2)).transaction()).isNotSameAs(open);
    }

    @Test
    void aSpareOlderThanItsAgeIsAbortedAndAFreshOneTaken() {
        TransactionPool pool = pool(1);
        pool.join(input(1));
        assertThat(coordinator.begun).as("the first and the spare").hasSize(2);

        time.advance(SPARE_AGE.plusMillis(1));
        SharedTransaction next = pool.join(input(2)).transaction();

        assertThat(coordinator.begun.get(1).aborts).as("the stale spare").hasValue(1);
        assertThat(next.begun.join()).isSameAs(coordinator.begun.get(2));
        assertThat(metrics.transactionsAborted)
                .as("not counted: it had nothing")
                .hasValue(0);
    }

    @Test
    void anOpenTransactionWhoseBeginFailedIsNotJoined() {
        Transactions failingOnce = new Transactions() {
            private int calls;

            @Override
            public synchronized CompletableFuture<org.apache.pulsar.client.api.transaction.Transaction> begin(
                    Duration timeout) {
                return ++calls == 1
                        ? CompletableFuture.failedFuture(new IllegalStateException("no coordinator"))
                        : coordinator.transactions.begin(timeout);
            }
        };
        TransactionPool pool = new TransactionPool(failingOnce, 100, SPARE_AGE, aborts, time);
        SharedTransaction failed = pool.join(input(1)).transaction();
        assertThat(failed.begun).isCompletedExceptionally();

        TransactionPool.Joined next = pool.join(input(2));

        assertThat(next.opened()).isTrue();
        assertThat(next.transaction()).isNotSameAs(failed);
        assertThat(next.transaction().begun).isCompleted();
    }

    @Test
    void theSpareTransactionIsAbortedAtStop() {
        TransactionPool pool = pool(1);
        pool.join(input(1));
        assertThat(coordinator.begun).as("the delivery's and the spare").hasSize(2);

        pool.stop();

        assertThat(coordinator.begun.get(0).aborts).hasValue(0);
        assertThat(coordinator.begun.get(1).aborts).as("the spare").hasValue(1);
        assertThat(metrics.transactionsAborted)
                .as("not counted: it had nothing")
                .hasValue(0);
    }
}
