package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.MessageId;
import org.junit.jupiter.api.Test;

/** When deliveries that share a transaction commit it, leave it or abort it. */
class SharedTransactionTest {
    private final SharedTransaction shared = new SharedTransaction(new CompletableFuture<>(), 0);
    private final MessageId first = MessageId.earliest;
    private final MessageId second = MessageId.latest;

    @Test
    void itCommitsOnceClosedAndEveryDeliveryOfItIsSettled() {
        shared.join(100);
        shared.join(100);
        CompletableFuture<Void> a = new CompletableFuture<>();
        CompletableFuture<Void> b = new CompletableFuture<>();

        assertThat(shared.ready(first, a)).isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(shared.close()).as("one delivery still running").isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(shared.ready(second, b)).isEqualTo(SharedTransaction.Next.COMMIT);
        assertThat(shared.readyInputs()).containsExactly(first, second);
        assertThat(shared.waiting()).containsExactly(a, b);
        assertThat(shared.close()).as("closed twice").isEqualTo(SharedTransaction.Next.WAIT);
    }

    @Test
    void itClosesWhenFullAndTakesNoMore() {
        assertThat(shared.join(2)).isFalse();
        assertThat(shared.join(2)).isTrue();

        shared.ready(first, new CompletableFuture<>());
        assertThat(shared.left()).isEqualTo(SharedTransaction.Next.COMMIT);
        assertThat(shared.readyInputs()).containsExactly(first);
    }

    @Test
    void aDeliveryThatLeftIsNotAcknowledgedAndATransactionEveryoneLeftIsDiscarded() {
        shared.join(100);
        shared.join(100);
        shared.close();

        assertThat(shared.left()).isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(shared.left()).isEqualTo(SharedTransaction.Next.DISCARD);
    }

    @Test
    void anAbortFailsTheWaitingDeliveriesAndThoseSettledLaterWithItsReason() {
        shared.join(100);
        shared.join(100);
        shared.join(100);
        CompletableFuture<Void> waiting = new CompletableFuture<>();
        shared.ready(first, waiting);
        IllegalStateException reason = new IllegalStateException("another delivery failed after a send");

        assertThat(shared.abort(reason)).containsExactly(waiting);
        assertThat(shared.abort(reason)).as("aborted twice").isNull();

        CompletableFuture<Void> later = new CompletableFuture<>();
        assertThat(shared.ready(second, later)).isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(later).isCompletedExceptionally();
        assertThat(later.handle((none, error) -> error).join()).isSameAs(reason);
        assertThat(shared.left()).as("nothing to commit or discard").isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(shared.close()).isEqualTo(SharedTransaction.Next.WAIT);
    }

    @Test
    void aCommittingTransactionCannotBeAborted() {
        shared.join(1);
        shared.ready(first, new CompletableFuture<>());

        assertThat(shared.abort(new IllegalStateException("too late"))).isNull();
        assertThat(shared.waiting()).hasSize(1);
        assertThat(List.of(shared.deliveries())).containsExactly(1);
    }
}
