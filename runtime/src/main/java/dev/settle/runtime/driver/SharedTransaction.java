package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.transaction.Transaction;

/**
 * One transaction of an exactly-once subscription and the deliveries that share it (docs/exactly-once.md, "Commit
 * batching"): the deliveries that began while it was open, up to the subscription's {@code commitBatch}. It commits
 * once it is closed and each of its deliveries has been settled: acknowledged in it (ready), or gone without having
 * sent anything (left). A delivery that fails after sending an output, or whose output is not stored, aborts it,
 * and every delivery of it then fails. Only the state is kept here; {@link CommitStage} makes the calls, outside its
 * monitor. Thread-safe.
 */
final class SharedTransaction {
    /** What a change of state asks the commit stage to do. */
    enum Next {
        /** Nothing yet: deliveries of it are still running, or it is still open. */
        WAIT,
        /** Acknowledge its ready inputs in it and commit it. */
        COMMIT,
        /** It has nothing to commit (every delivery of it left): abort it, quietly. */
        DISCARD
    }

    final CompletableFuture<Transaction> begun;
    /** When it was begun, on the runtime's {@code Time}. */
    final long begunNanos;
    /**
     * Completed exceptionally once it has run out of its timeout: what its deliveries still wait for (an output's
     * send, the acknowledgement, the commit) is given up then, since the coordinator aborts it anyway.
     */
    final CompletableFuture<Void> expired = new CompletableFuture<>();

    /** Guarded by this, as is every field below. */
    private int joined;

    private int settled;
    private boolean closed;
    /** Committing, committed, discarded or aborted: its deliveries get no more say. */
    private boolean finished;

    /** Deliveries whose call is over and whose sends are done, whatever became of them. */
    private int quiet;
    /** Whether the coordinator was asked to abort it (once). */
    private boolean abortSent;

    private Throwable abortedBecause;
    /** The inputs of the deliveries that joined it. */
    private final Set<MessageId> inputs = new HashSet<>();

    private final List<MessageId> ready = new ArrayList<>();
    private final List<CompletableFuture<Void>> waiting = new ArrayList<>();
    /** Its expiry at the timeout, until it has ended here. */
    private Time.Scheduled expiry;

    SharedTransaction(CompletableFuture<Transaction> begun, long begunNanos) {
        this.begun = begun;
        this.begunNanos = begunNanos;
    }

    /** Takes one more delivery, of {@code input}; whether it is full now (closed, so it takes no more). */
    synchronized boolean join(MessageId input, int maxDeliveries) {
        joined++;
        inputs.add(input);
        if (joined >= maxDeliveries) {
            closed = true;
        }
        return closed;
    }

    /** Whether a delivery of {@code input} joined it. */
    synchronized boolean holds(MessageId input) {
        return inputs.contains(input);
    }

    /** Takes no more deliveries: it commits once those it has are settled. */
    synchronized Next close() {
        closed = true;
        return next();
    }

    /**
     * A delivery of it acknowledges: {@code committed} is completed by the commit, or failed if it is aborted, from
     * now on, even while the delivery's outputs are still being stored. Failed at once, with the reason, when the
     * transaction was aborted already.
     */
    void expect(CompletableFuture<Void> committed) {
        Throwable aborted;
        synchronized (this) {
            aborted = abortedBecause;
            if (aborted == null) {
                waiting.add(committed);
                return;
            }
        }
        committed.completeExceptionally(aborted);
    }

    /**
     * The delivery of {@code input}, expected before, is ready: its outputs are stored, so its acknowledgement goes
     * into the commit. Nothing to do once the transaction was aborted (the delivery failed with it).
     */
    synchronized Next ready(MessageId input) {
        if (abortedBecause != null) {
            return Next.WAIT;
        }
        settled++;
        ready.add(input);
        return next();
    }

    /** A delivery of it is settled without acknowledging and without having sent anything in it. */
    synchronized Next left() {
        settled++;
        return next();
    }

    /**
     * Aborts it because of {@code reason}, unless it is finished already: the deliveries expected to commit are failed
     * with it (by the caller), and those still running fail with it when they are settled.
     *
     * @return the deliveries to fail; null when it was finished already (nothing to abort)
     */
    synchronized List<CompletableFuture<Void>> abort(Throwable reason) {
        if (finished) {
            return null;
        }
        finished = true;
        abortedBecause = reason;
        List<CompletableFuture<Void>> failed = List.copyOf(waiting);
        waiting.clear();
        return failed;
    }

    /**
     * A delivery of it is quiet: its call is over and each of its sends is done (stored or failed), so it sends
     * nothing more in it. Whether the abort is to be sent now: it was aborted and this was the last delivery still
     * sending.
     */
    synchronized boolean quiet() {
        quiet++;
        return abortDue();
    }

    /**
     * Whether the abort is to be sent now: it was aborted and none of its deliveries is still sending. The client
     * takes a send that began before an abort into the transaction yet may let the abort overtake it (its count of
     * pending sends is taken after the transaction's state was checked), and the broker then stores the send after
     * the abort's marker: the output topic holds that transaction open for ever, and its readers stop before it.
     */
    synchronized boolean abortDue() {
        if (abortedBecause == null || abortSent || quiet < joined) {
            return false;
        }
        abortSent = true;
        return true;
    }

    /**
     * Whether the abort is to be sent now, its deliveries still sending or not (once): it was aborted because it ran
     * out of its timeout, so the coordinator has aborted it and stores none of its sends any more.
     */
    synchronized boolean abortNow() {
        if (abortedBecause == null || abortSent) {
            return false;
        }
        abortSent = true;
        return true;
    }

    /** {@code task} expires it at its timeout, unless it ends first. */
    synchronized void expiresBy(Time.Scheduled task) {
        expiry = task;
    }

    /**
     * It has ended here (committed, its abort sent, or discarded): its expiry would find nothing left to do, and is
     * cancelled, so that the timer does not keep it and its deliveries reachable for the rest of its timeout.
     */
    void ended() {
        Time.Scheduled task;
        synchronized (this) {
            task = expiry;
            expiry = null;
        }
        if (task != null) {
            task.cancel();
        }
    }

    /** The inputs to acknowledge in the commit; read once {@link Next#COMMIT} was answered. */
    synchronized List<MessageId> readyInputs() {
        return List.copyOf(ready);
    }

    /** The deliveries the commit completes; read once {@link Next#COMMIT} was answered. */
    synchronized List<CompletableFuture<Void>> waiting() {
        return List.copyOf(waiting);
    }

    synchronized int deliveries() {
        return ready.size();
    }

    private Next next() {
        if (finished || !closed || settled < joined) {
            return Next.WAIT;
        }
        finished = true;
        return ready.isEmpty() ? Next.DISCARD : Next.COMMIT;
    }
}
