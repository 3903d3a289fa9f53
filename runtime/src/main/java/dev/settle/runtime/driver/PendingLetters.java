package dev.settle.runtime.driver;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Counts each dead letter being written as a pending send of its subscription ({@link PendingOutputs}), so letters
 * are bounded by {@code maxPendingOutputs} as outputs are: a handler that fails every message at full speed makes
 * the receiver wait for letters to be stored, instead of queueing letters until the client's memory limit refuses
 * them (each refused letter would then be written by the client without its cause).
 *
 * @param <M> the message type the consumer calls take
 */
final class PendingLetters<M> implements DeadLetterWriter<M> {
    private final DeadLetterWriter<M> letters;
    private final PendingOutputs pending;

    PendingLetters(DeadLetterWriter<M> letters, PendingOutputs pending) {
        this.letters = letters;
        this.pending = pending;
    }

    @Override
    public CompletionStage<?> write(UnitOfWork<M> work, Map<String, String> settleProperties) {
        pending.waiting(1);
        CompletionStage<?> written;
        try {
            written = letters.write(work, settleProperties);
        } catch (RuntimeException e) {
            written = CompletableFuture.failedFuture(e);
        }
        written.whenComplete((stored, notStored) -> pending.settled(1));
        return written;
    }

    @Override
    public boolean acknowledgesOriginal() {
        return letters.acknowledgesOriginal();
    }
}
