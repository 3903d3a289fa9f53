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
        shared.join(first, 100);
        shared.join(first, 100);
        CompletableFuture<Void> a = new CompletableFuture<>();
        CompletableFuture<Void> b = new CompletableFuture<>();

        shared.expect(a);
        shared.expect(b);
        assertThat(shared.ready(first)).isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(shared.close()).as("one delivery still running").isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(shared.ready(second)).isEqualTo(SharedTransaction.Next.COMMIT);
        assertThat(shared.readyInputs()).containsExactly(first, second);
        assertThat(shared.waiting()).containsExactly(a, b);
        assertThat(shared.close()).as("closed twice").isEqualTo(SharedTransaction.Next.WAIT);
    }

    @Test
    void itKnowsTheInputsOfItsDeliveries() {
        shared.join(first, 100);

        assertThat(shared.holds(first)).isTrue();
        assertThat(shared.holds(second)).isFalse();
    }

    @Test
    void itClosesWhenFullAndTakesNoMore() {
        assertThat(shared.join(first, 2)).isFalse();
        assertThat(shared.join(first, 2)).isTrue();

        shared.expect(new CompletableFuture<>());
        shared.ready(first);
        assertThat(shared.left()).isEqualTo(SharedTransaction.Next.COMMIT);
        assertThat(shared.readyInputs()).containsExactly(first);
    }

    @Test
    void aDeliveryThatLeftIsNotAcknowledgedAndATransactionEveryoneLeftIsDiscarded() {
        shared.join(first, 100);
        shared.join(first, 100);
        shared.close();

        assertThat(shared.left()).isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(shared.left()).isEqualTo(SharedTransaction.Next.DISCARD);
    }

    @Test
    void anAbortFailsTheWaitingDeliveriesAndThoseSettledLaterWithItsReason() {
        shared.join(first, 100);
        shared.join(first, 100);
        shared.join(first, 100);
        CompletableFuture<Void> waiting = new CompletableFuture<>();
        shared.expect(waiting);
        shared.ready(first);
        CompletableFuture<Void> storing = new CompletableFuture<>();
        shared.expect(storing);
        IllegalStateException reason = new IllegalStateException("another delivery failed after a send");

        assertThat(shared.abort(reason))
                .as("the ready one and the one whose outputs are still being stored")
                .containsExactly(waiting, storing);
        assertThat(shared.abort(reason)).as("aborted twice").isNull();
        assertThat(shared.ready(second)).as("stored after the abort").isEqualTo(SharedTransaction.Next.WAIT);

        CompletableFuture<Void> later = new CompletableFuture<>();
        shared.expect(later);
        assertThat(later).isCompletedExceptionally();
        assertThat(later.handle((none, error) -> error).join()).isSameAs(reason);
        assertThat(shared.left()).as("nothing to commit or discard").isEqualTo(SharedTransaction.Next.WAIT);
        assertThat(shared.close()).isEqualTo(SharedTransaction.Next.WAIT);
    }

    @Test
    void aCommittingTransactionCannotBeAborted() {
        shared.join(first, 1);
        shared.expect(new CompletableFuture<>());
        shared.ready(first);

        assertThat(shared.abort(new IllegalStateException("too late"))).isNull();
        assertThat(shared.waiting()).hasSize(1);
        assertThat(List.of(shared.deliveries())).containsExactly(1);
    }
}
