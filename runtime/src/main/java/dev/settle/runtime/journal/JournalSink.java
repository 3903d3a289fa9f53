package dev.settle.runtime.journal;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Where a {@link JournalWriter} sends its records, already encoded as message bodies: the journal topic ({@link
 * PulsarJournalSink}), or a test's fake. {@link #write} must not block: it is called on the runtime's one timer thread.
 */
interface JournalSink extends AutoCloseable {
    /**
     * Sends {@code batches}, a message each; completes with how many of their records were not stored (0 when all
     * were). Never fails: a sink that cannot write answers with the whole count.
     */
    CompletionStage<Integer> write(List<JournalBatch> batches);

    /** Sends what it holds and lets go of its producer. */
    @Override
    void close();
}
