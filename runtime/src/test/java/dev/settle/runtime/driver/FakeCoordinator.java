package dev.settle.runtime.driver;

import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.api.transaction.TxnID;

/**
 * A transaction coordinator and a consumer's transactional acknowledgement, faked for the exactly-once unit tests
 * ({@code CommitStageTest}, {@code CommitBatcherTest}, {@code TransactionPoolTest}): what was begun, acknowledged,
 * committed and aborted, and what each answers. (Against a real coordinator: ExactlyOnceIT.)
 */
final class FakeCoordinator {
    /** The timeout of a subscription with {@code handlerTimeout: 5s}: 5 s + 30 s. */
    static final Duration TIMEOUT = Duration.ofSeconds(35);
    /** Its spare transactions' age: a third of the 30 s past the calls. */
    static final Duration SPARE_AGE = Duration.ofSeconds(10);

    final List<FakeTransaction> begun = new CopyOnWriteArrayList<>();
    final List<List<MessageId>> acknowledged = new CopyOnWriteArrayList<>();
    /** What the next acknowledgements answer; a future never completed stands for one never answered. */
    CompletableFuture<Void> acknowledgeAnswer = CompletableFuture.completedFuture(null);
    /** What the next commits answer; a future never completed stands for a coordinator that does not answer. */
    CompletableFuture<Void> commitAnswer = CompletableFuture.completedFuture(null);
    /** What the first commits answer, one each, before {@link #commitAnswer}. */
    final Deque<CompletableFuture<Void>> firstCommitAnswers = new ConcurrentLinkedDeque<>();
    /** Whether a transaction is begun at once, or never (a coordinator that does not answer). */
    boolean answersBegin = true;

    private final AtomicInteger ids = new AtomicInteger();

    /** Begins a transaction at once, or never. */
    final Transactions transactions = timeout -> {
        if (!answersBegin) {
            return new CompletableFuture<>();
        }
        FakeTransaction transaction = new FakeTransaction(begun.size() + 1);
        begun.add(transaction);
        return CompletableFuture.completedFuture(transaction);
    };

    /** The consumer's {@code acknowledgeAsync(messageIds, transaction)}: recorded, answered {@link #acknowledgeAnswer}. */
    final BiFunction<List<MessageId>, Transaction, CompletableFuture<Void>> acknowledge = (inputs, transaction) -> {
        acknowledged.add(inputs);
        return acknowledgeAnswer;
    };

    /** A new delivery, of its own input, received now. */
    UnitOfWork<Message<?>> delivery(Time time) {
        MessageId id = new FakeId(ids.incrementAndGet());
        return new UnitOfWork<>(UnitOfWorkTest.message(id), id, 1, false, time.nanoTime());
    }

    /** Gives {@code work} one output, sent in its transaction, whose send completes with {@code send}. */
    static void sends(UnitOfWork<Message<?>> work, CompletableFuture<MessageId> send) {
        work.outputs(new NoOutputs()).add(send);
    }

    /** What {@code future} failed with; an assertion error when it did not fail. */
    static Throwable failure(CompletableFuture<Void> future) {
        try {
            future.getNow(null);
            throw new AssertionError("not failed: " + future);
        } catch (CompletionException e) {
            return e.getCause();
        } catch (CancellationException e) {
            return e;
        }
    }

    final class FakeTransaction implements Transaction {
        private final TxnID id;
        final AtomicInteger aborts = new AtomicInteger();
        final AtomicInteger commits = new AtomicInteger();

        FakeTransaction(long n) {
            this.id = new TxnID(0, n);
        }

        @Override
        public CompletableFuture<Void> commit() {
            commits.incrementAndGet();
            CompletableFuture<Void> first = firstCommitAnswers.poll();
            return first != null ? first : commitAnswer;
        }

        @Override
        public CompletableFuture<Void> abort() {
            aborts.incrementAndGet();
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public TxnID getTxnID() {
            return id;
        }

        @Override
        public State getState() {
            return State.OPEN;
        }
    }

    record FakeId(int n) implements MessageId {
        @Override
        public byte[] toByteArray() {
            return new byte[] {(byte) n};
        }

        @Override
        public int compareTo(MessageId other) {
            return Integer.compare(n, ((FakeId) other).n);
        }
    }

    /** Outputs a test adds sends to by hand. */
    private static final class NoOutputs implements Outputs {
        @Override
        public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {}
    }
}
