package dev.settle.runtime.driver;

import dev.settle.runtime.publish.Publishes;
import dev.settle.sdk.Outcome;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.Message;

/**
 * Exactly-once (docs/exactly-once.md): a delivery joins a transaction of {@link CommitStage} before its call, so its
 * outputs are sent in it. An outcome that acknowledges gives its call back at once and is settled when its
 * transaction has committed (outputs stored, input acknowledged in it), or as a failure once it is aborted; anything
 * else leaves the transaction (a failure after a send aborts it, so its outputs are never read) and is settled now.
 * Dead letters are written in transactions of their own with their input's acknowledgement.
 */
final class ExactlyOnce implements SettlementStrategy {
    private final CommitStage commits;
    /** A dead letter or delay copy and its original's acknowledgement commit together, or neither does. */
    private final CopyCommits<Message<?>> copies;

    ExactlyOnce(CommitStage commits) {
        this.commits = commits;
        this.copies = CopyCommits.committed(commits::commitLetter);
    }

    @Override
    public void begin(UnitOfWork<Message<?>> work) throws TransactionFailedException {
        // Before the call: every output it sends goes into the transaction.
        commits.begin(work);
    }

    @Override
    public void callOver(InFlight delivery, CompletableFuture<Outcome> outcome, Outcome returned) {
        UnitOfWork<Message<?>> work = delivery.work();
        if (!SettlementStrategy.acknowledges(returned) || work.transaction().isEmpty()) {
            // handle hands over the error as it was stored, wrapping nothing.
            commits.notAcknowledged(
                    work,
                    outcome.isCompletedExceptionally()
                            ? outcome.handle((none, e) -> e).join()
                            : null);
            delivery.settle(outcome);
            return;
        }
        // Counted before the permit goes back, as outputs are: a stop that has every permit sees this commit waiting,
        // and a twin that comes meanwhile is held back.
        delivery.settleAfter(work.outputs().map(Publishes::count).orElse(0), () -> commits.commit(work), error -> {
            if (error != null) {
                return CompletableFuture.failedFuture(error);
            }
            delivery.committed();
            return outcome;
        });
    }

    @Override
    public CopyCommits<Message<?>> copyCommits() {
        return copies;
    }

    @Override
    public void idle() {
        commits.closeOpen();
    }

    @Override
    public void close() {
        commits.close();
    }

    @Override
    public String toString() {
        return "exactly-once";
    }
}
